"""A training row of the performance model as the perfmodel tests build them by hand
(tests/perfmodel/test_predict.py, tests/perfmodel/test_habitat.py): one measured scenario with its
roofline time and peaks."""

from __future__ import annotations


def row(model, hw, backend, batch, latency, roofline, peak=1e11, params=1e6):
    """One row: ``latency`` measured, ``roofline`` seconds at ``peak`` FLOP/s."""
    return {
        "model_id": model,
        "family": "text",
        "num_parameters": params,
        "hardware_id": hw,
        "threads": 1,
        "hardware_config": hw,
        "backend": backend,
        "mode": "eager",
        "precision": "fp32",
        "batch_size": batch,
        "input_shape": "x=1",
        "latency_s": latency,
        "roofline_s": roofline,
        "flops": roofline * peak,
        "bytes": None,
        "peak_flops": peak,
        "peak_bandwidth": 1e10,
    }
