"""What a timed PyTorch model is measured by beside its time: the FLOPs of one forward, and its
output's agreement with the fp32 model on the CPU."""

from __future__ import annotations

from benchdb.harness.validity import error_text


def count_flops(torch, net, fwd) -> float | None:
    from torch.utils.flop_counter import FlopCounterMode

    try:
        with torch.inference_mode(), FlopCounterMode(display=False) as counter:
            net(**fwd)
        return float(counter.get_total_flops())
    except Exception:  # some ops have no FLOP formula; FLOPs are then unknown, not wrong
        return None


def agreement(
    torch, model, base, net, precision: str, reference_inputs: dict, fwd: dict, full: bool = False
) -> tuple[dict, list]:
    """The output's agreement with the fp32 model on the CPU, on the same inputs, by the exported-
    graph runners' check (onnx_export.check_outcome): max errors, cosine similarity, top-1 or token
    agreement (``full``: at fp32 too, for a kernelized model). Recorded, never a reason to fail the
    result (its tolerance verdict is not used); an output that cannot be compared records why in extra."""
    from benchdb.backends.shared import onnx_export as export

    names = list(fwd)
    try:
        reference = export.reference_output(export.flat_module(model, base, names), reference_inputs)
        with torch.inference_mode():
            out = export.flat_module(model, net, names)(**fwd)[0].float().cpu().numpy()
    except Exception as exc:  # e.g. an output the flat wrapper cannot walk: no agreement, not a failure
        return {"agreement_error": error_text(exc)}, []
    _, _, rows, fields = export.check_outcome(reference, out, precision, model.kind.task, model.kind.generative)
    if fields["max_abs_err"] is None:
        return {"agreement_error": "outputs of another shape, or NaN or inf"}, []
    fields.pop("tolerance")
    if full and precision == "fp32":  # check_outcome leaves these out at fp32
        found = export.agreement(reference, out, model.kind.task, model.kind.generative)
        rows += [(name, "ratio", 0, 0.0, value) for name, value in found.items()]
        fields.update(found)
    return fields, rows
