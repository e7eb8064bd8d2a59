"""One ort-web scenario in its page: the model exported and loaded into an onnxruntime-web session,
its first output checked against PyTorch fp32, and its calls timed in the page (samples of ``k``
calls, fetched in chunks) under benchdb's own timing loop; and the identity a result records of the
browser and its execution provider."""

from __future__ import annotations

import base64
import math
import time
from typing import Any

from benchdb.backends.ortweb import assets, browser
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.harness.validity import judge, measurement_rows

#: A sample lasts at least this many steps of the page's clock (5 us steps: 0.5 ms, <= 1 % error).
RESOLUTIONS_PER_SAMPLE = 100


TIMING_METHOD = "page_performance_now"


#: Seconds of samples the page times per round trip to Python (at most MAX_CHUNK samples).
CHUNK_S = 0.05


MAX_CHUNK = 200


EMULATED = "emulated: software WebGPU adapter ({arch}, isFallbackAdapter); measures correctness, not GPU speed"


class _PageSamples:
    """measure()'s call and timer over samples timed in the page.

    ``call()`` takes the next sample, asking the page for a chunk of ``n`` samples (of ``k``
    calls each) when none is left; ``stop()`` returns that sample's in-page time. measure() so
    sees, one by one, exactly the samples the page timed, and its warm-up and stopping rule
    decide as for any other runner; samples the page timed after the rule stopped are dropped
    (counted in ``dropped``). ``start()`` is the host clock (offsets, elapsed time: wall time).
    """

    method = TIMING_METHOD

    def __init__(self, page, k: int, n: int):
        self.page, self.k, self.n = page, k, n
        self.queue: list[float] = []
        self.current = 0.0
        self.round_trips = 0

    def __call__(self) -> None:
        if not self.queue:
            self.queue = list(self.page.evaluate("a => window.benchdb.samples(a.k, a.n)", {"k": self.k, "n": self.n}))
            self.queue.reverse()
            self.round_trips += 1
        self.current = self.queue.pop()

    @property
    def dropped(self) -> int:
        return len(self.queue)

    def start(self) -> float:
        return time.perf_counter()

    def stop(self) -> float:
        return self.current


def _feeds(fwd: dict) -> list[dict]:
    out = []
    for name, t in fwd.items():
        arr = t.detach().contiguous().numpy()
        dtype = {
            "float32": "float32",
            "int64": "int64",
            "int32": "int32",
            "bool": "bool",
            "float64": "float64",
            "uint8": "uint8",
        }.get(str(arr.dtype))
        if dtype is None:
            raise BenchdbError(f"input {name} has dtype {arr.dtype}, which benchdb's page cannot pass")
        if dtype == "bool":
            arr = arr.astype("uint8")
        out.append(
            {"name": name, "dtype": dtype, "dims": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode()}
        )
    return out


def _external_files(path) -> list[str]:
    """The external-data files an ONNX graph names (the dynamo exporter writes ``model.onnx.data``)."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    names = {
        e.value
        for t in graph.initializer
        if t.data_location == onnx.TensorProto.EXTERNAL
        for e in t.external_data
        if e.key == "location"
    }
    return sorted(names)


def scenario_identity(env: dict, sc: Scenario) -> dict:
    gpu = env.get("webgpu") or {}
    out = {
        "browser": env.get("browser"),
        "user_agent": env.get("userAgent"),
        "onnxruntime_web": assets.VERSION,
        "execution_provider": sc.device,
        "wasm_simd": env.get("simd"),
        "cross_origin_isolated": env.get("crossOriginIsolated"),
        "shared_array_buffer": env.get("sharedArrayBuffer"),
        "hardware_concurrency": env.get("hardwareConcurrency"),
        "timer_resolution_s": env.get("timerResolution"),
        "browser_flags": browser.flags(sc.device),
    }
    if sc.device == "webgpu" and "error" not in gpu:
        out["adapter"] = gpu
        out["emulated"] = bool(gpu.get("isFallbackAdapter"))
    return out


def run_scenario(
    page, srv, model, net, sc: Scenario, opts: RunOptions, info: dict, load_s: float, started: str, env: dict
) -> Outcome:
    import numpy as np

    from benchdb.backends.shared import inputs
    from benchdb.backends.shared import onnx_export as export

    inp = inputs.make(model, net, sc.batch_size, sc.settings.get("seq_len") or 1, new_tokens=opts.gen_tokens)
    fwd = inp.forward
    exported = export.onnx(model, net, fwd)
    reference = export.reference_output(export.flat_module(model, net, list(fwd)), fwd)
    threads = sc.options.get("threads") or opts.thread_count
    page.evaluate(
        "a => window.benchdb.init(a)",
        {"entry": f"/ort/{assets.ENTRY[sc.device]}", "ortBase": f"{srv.url}/ort/", "threads": threads},
    )
    t0 = time.perf_counter()
    url = srv.serve_model(exported.path)
    loaded = page.evaluate(
        "a => window.benchdb.load(a)",
        {
            "modelUrl": url,
            "ep": sc.device,
            "inputs": _feeds(fwd),
            "externalData": [
                {"path": name, "data": url.rsplit("/", 1)[0] + "/" + name} for name in _external_files(exported.path)
            ],
        },
    )
    session_s = time.perf_counter() - t0
    first = page.evaluate("() => window.benchdb.firstCall()")
    out = np.frombuffer(base64.b64decode(first["b64"]), dtype=np.float32).reshape(first["dims"])
    status, error, base_rows, checked = export.check_outcome(reference, out, sc.precision)
    identity = scenario_identity(env, sc)
    identity["wasm_threads"] = loaded.get("threads")
    extra: dict[str, Any] = {
        "route": exported.route,
        "dynamic_batch": exported.dynamic_batch,
        "export_cached": exported.cached,
        **checked,
        "precision_used": "fp32",
        **identity,
    }
    if identity.get("emulated"):
        extra["warnings"] = [EMULATED.format(arch=(env.get("webgpu") or {}).get("architecture") or "software")]
    if model.kind.generative:
        extra["decode"] = (
            "decode metrics unsupported: the exported graph is the prefill forward "
            "(no KV-cache graph); see the pytorch backend for TTFT/TPOT"
        )
    base_rows += [("load_s", "s", 0, 0.0, load_s), ("session_create_s", "s", 0, 0.0, session_s)]
    if exported.export_s is not None:
        base_rows.append(("export_s", "s", 0, 0.0, exported.export_s))
    if opts.verify_only:
        return Outcome(
            sc,
            info,
            status=status,
            error=error,
            rows=base_rows,
            timing_method="none",
            started_at=started,
            extra={**extra, "verify_only": True},
            primary_metric="max_rel_err",
        )
    m, cond, method, timing = _measure_in_page(page, env, first, opts)
    extra.update(timing)
    rows = measurement_rows(m) + base_rows
    return Outcome(
        sc,
        info,
        status=status,
        error=error,
        rows=rows,
        validity_reasons=judge(m, opts.rule, cond, opts.max_background_cpu),
        timing_method=method,
        stop_reason=m.stop_reason,
        conditions=cond,
        started_at=started,
        extra=extra,
    )


def _measure_in_page(page, env: dict, first: dict, opts: RunOptions):
    """The timed samples of the loaded session in its page: (measurement, conditions, timing method,
    what the outcome records of how it was timed)."""
    from benchdb.harness.timing import measure

    # Calls per sample: enough that a sample spans RESOLUTIONS_PER_SAMPLE steps of the page's clock;
    # samples per round trip: a chunk of about CHUNK_S seconds (a round trip costs milliseconds).
    resolution = float(env.get("timerResolution") or 5e-6)
    single = min(page.evaluate("k => window.benchdb.batch(k)", 1) for _ in range(3))
    k = max(1, math.ceil(RESOLUTIONS_PER_SAMPLE * resolution / max(single, resolution)))
    n = max(1, min(MAX_CHUNK, int(CHUNK_S / max(single * k, resolution))))
    calls = _PageSamples(page, k, n)
    cond = Conditions.now(opts.thread_count)
    m = measure(calls, opts.rule, timer=calls)
    m.first_call_s = float(first["seconds"])  # the session's real first call (measure's was a warm-up)
    method = TIMING_METHOD if k == 1 else f"{TIMING_METHOD}_batched"
    return (
        m,
        cond,
        method,
        {
            "ci_rel": m.ci_rel,
            "calls_per_sample": k,
            "samples_per_round_trip": n,
            "round_trips": calls.round_trips,
            "dropped_samples": calls.dropped,
            "timer_resolution_s": resolution,
            "timing": f"performance.now() in the page around {k} awaited session.run call(s) per sample, "
            f"{n} samples per round trip; warm-up and stopping rule: benchdb.harness.timing.measure "
            "over those samples in order",
        },
    )
