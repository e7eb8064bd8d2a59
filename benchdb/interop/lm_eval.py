"""lm-evaluation-harness results (``results.json``, or ``results_<timestamp>.json`` under
``--output_path``): task scores attached to a model, precision and hardware, so accuracy measured
elsewhere sits beside speed.

One file is one result (mode ``accuracy``; never a timing: results_latest and the speed reports
leave it out): each task's metrics as ``<task>/<metric>`` (unit ratio; ``acc``, ``acc_norm``,
``exact_match``, ...) and their standard errors as ``<task>/<metric>_stderr`` where lm-eval gives
one. The model is ``pretrained=`` of its ``model_args`` (``--model`` names benchdb's id for it
instead, e.g. ``tiny:llama`` or a local folder), the precision its ``dtype`` (``--precision``
where it names none), the backend its model type (``hf`` is PyTorch), the hardware ``--hardware``.
The ``accuracy_scores`` view lists the scores; ``result_accuracy`` and ``report --max-accuracy-drop``
use a precision's drop against fp32 on the same task and metric.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchdb.interop.writer import Imported, SourceError, utc_iso

FILES = ("results.json", "results_*.json")
#: lm-eval's --model -> benchdb backend
BACKENDS = {
    "hf": "pytorch",
    "hf-auto": "pytorch",
    "huggingface": "pytorch",
    "vllm": "vllm",
    "sglang": "sglang",
    "openvino": "openvino",
    "optimum-lm": "openvino",
    "local-completions": "openai",
    "local-chat-completions": "openai",
    "openai-completions": "openai",
    "openai-chat-completions": "openai",
}
DTYPES = {
    "float32": "fp32",
    "fp32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "fp16": "fp16",
    "bfloat16": "bf16",
    "bf16": "bf16",
    "int8": "int8",
    "int4": "int4",
}


def model_args(value: Any) -> dict[str, str]:
    """lm-eval's ``model_args``: a dict, or its ``key=value,key=value`` string."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    out = {}
    for part in str(value or "").split(","):
        key, sep, val = part.partition("=")
        if sep:
            out[key.strip()] = val.strip()
    return out


def parse(path: Path) -> list[Imported]:
    from benchdb.interop import load_json

    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise SourceError("no 'results' object: not an lm-evaluation-harness results file")
    config: dict[str, Any] = doc["config"] if isinstance(doc.get("config"), dict) else {}
    args = model_args(config.get("model_args"))
    samples: dict[str, tuple[str, list[float]]] = {}
    for task, metrics in sorted(doc["results"].items()):
        if not isinstance(metrics, dict):
            continue
        for key, value in metrics.items():
            name, _, filt = str(key).partition(",")  # "acc,none": metric, filter
            if name == "alias" or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue  # "N/A" stderr, aliases
            if not math.isfinite(float(value)):
                continue
            metric = f"{task}/{name}" + (f"[{filt}]" if filt and filt != "none" else "")
            samples[metric] = ("ratio", [float(value)])
    scores = [m for m in samples if not m.endswith("_stderr") and "_stderr[" not in m]
    if not scores:
        raise SourceError("no numeric task scores in 'results'")
    dtype = args.get("dtype") or args.get("torch_dtype") or str(config.get("model_dtype") or "").removeprefix("torch.")
    precision = DTYPES.get(str(dtype).lower(), "unknown") if dtype else "unknown"
    tool_model = str(doc.get("model_source") or config.get("model") or "")
    batch = config.get("batch_size")
    shots: dict[str, Any] = doc["n-shot"] if isinstance(doc.get("n-shot"), dict) else {}
    tasks = sorted({m.split("/", 1)[0] for m in scores})
    return [
        Imported(
            model_id=args.get("pretrained") or str(doc.get("model_name") or ""),
            backend=BACKENDS.get(tool_model, tool_model or "unknown"),
            device=str(args.get("device") or config.get("device") or "unknown"),
            mode="accuracy",
            precision=precision,
            batch_size=batch if isinstance(batch, int) and batch > 0 else 1,
            input_shape="tasks=" + ",".join(tasks),
            samples=samples,
            primary_metric=scores[0],
            timing_method="none",
            options={
                "source": "lm-eval",
                "num_fewshot": {t: shots.get(t) for t in tasks if t in shots} or None,
                "limit": config.get("limit"),
            },
            started_at=utc_iso(doc.get("date")),
            tool="lm-evaluation-harness",
            tool_version=str(doc.get("lm_eval_version")) if doc.get("lm_eval_version") else None,
            config={"model": tool_model, "model_args": args, "versions": doc.get("versions")},
            settings={"model_declarable": True, "precision_declarable": True},
        )
    ]  # the run: the file's hash
