"""The core run options' declarations: every option each backend takes, its flag, kind, help and
default (read from the field it sets on the harness's RunOptions or StopRule), declared once."""

from __future__ import annotations

from dataclasses import MISSING, replace
from pathlib import Path
from typing import Any

from benchdb.backends.protocol import Option
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule

#: Marks a core option whose default is the field's it sets (:func:`_field_default`).
FIELD: Any = object()


#: Every backend takes these. Axes first (a config run entry's lists expand to their product).
_DECLARED: tuple[Option, ...] = (
    Option(
        "backend",
        "str",
        None,
        "Required unless --config or --suite: numpy, pytorch, onnxruntime, openvino, "
        "or an installed plug-in's name (`benchdb hardware` lists them).",
        metavar="NAME",
        key="backend",
        aliases=("backends",),
        axis=True,
    ),
    Option("device", "str", FIELD, "Device to measure on.", key="device", aliases=("devices",), axis=True),
    Option(
        "models",
        "words",
        (),
        "Model spec (repeatable): matmul:<N> for numpy; a local folder, a cached Hub id, "
        "tiny:<model_type> or list:<key|small|tiny> for ML backends.",
        flag="--model",
        repeat=True,
        key="model",
        aliases=("models",),
        axis=True,
    ),
    Option(
        "batch_sizes",
        "ints",
        FIELD,
        "Batch sizes, comma-separated: one scenario each.",
        minimum=1,
        flag="--batch-size",
        old_flags=("--batch-sizes",),
        key="batch_size",
        aliases=("batch_sizes",),
        axis=True,
    ),
    Option(
        "seq_lens",
        "ints",
        FIELD,
        "Sequence lengths (backends with text inputs), comma-separated.",
        minimum=1,
        flag="--seq-len",
        old_flags=("--seq-lens",),
        key="seq_len",
        aliases=("seq_lens",),
        axis=True,
    ),
    Option(
        "modes",
        "words",
        FIELD,
        "Comma-separated, each backend's own: pytorch: eager, compile[:mode], "
        "kernels, kernels+compile[:mode]; onnxruntime: opt-all, opt-extended, opt-basic, opt-disabled; "
        "openvino: latency, throughput; ort-web: opt-all; openai: completions, chat.",
        flag="--mode",
        key="mode",
        aliases=("modes",),
        axis=True,
    ),
    Option(
        "precisions",
        "words",
        FIELD,
        "Comma-separated: fp32, fp16, bf16, fp64; int8, int4 (quantized: see --quant).",
        flag="--precision",
        key="precision",
        aliases=("precisions",),
        axis=True,
    ),
    Option(
        "quantization",
        "str",
        FIELD,
        "How int8/int4 are made: dynamic, static (calibrated on 8 seeded inputs) "
        "or weights (weight-only); comma-separated: one scenario per method. Default per backend: "
        "onnxruntime int8 dynamic; openvino int8 static, int4 weights (NNCF); pytorch int8 dynamic (CPU).",
        flag="--quant",
        metavar="METHOD,...",
        aliases=("quant",),
    ),
    Option(
        "sts",
        "str",
        FIELD,
        "A sentence-similarity check (JSON lines: a, b, score) for embedding models with a "
        "tokenizer: each result records sts_spearman, its cosine similarities' rank correlation with the "
        "scores, at its own precision.",
        metavar="FILE",
    ),
    Option(
        "threads", "int", FIELD, "Fixed thread count (default: physical cores). Recorded with every result.", minimum=1
    ),
    Option("warmup", "int", FIELD, "Warm-up calls.", minimum=0, target="rule.warmup_iters"),
    Option("min_iters", "int", FIELD, "Timed calls at least, whatever the time.", minimum=1, target="rule.min_iters"),
    Option("min_time", "duration", FIELD, "Time to measure at least.", minimum=0, target="rule.min_time_s"),
    Option("max_time", "duration", FIELD, "Time to measure at most.", minimum=0, target="rule.max_time_s"),
    Option(
        "target_ci",
        "share",
        FIELD,
        "Stop once the 95% CI of the median is within +- this share of it.",
        minimum=0.0001,
        maximum=0.99,
        target="rule.target_ci",
    ),
    Option(
        "max_background_cpu",
        "percent",
        FIELD,
        "Other processes' CPU use (of the whole machine) above which a result is marked invalid.",
        minimum=0,
        maximum=100,
    ),
    Option(
        "task",
        "str",
        FIELD,
        "Override the detected task (feature-extraction, text-generation, text-classification, image-classification).",
    ),
    Option("gen_tokens", "int", FIELD, "Tokens each generate call must produce (generative models).", minimum=1),
    Option(
        "timeout_s",
        "duration",
        FIELD,
        "Time one scenario may take before it is recorded as timeout.",
        flag="--timeout",
        key="timeout",
        minimum=0.1,
    ),
    Option(
        "load_timeout_s",
        "duration",
        FIELD,
        "Time a model may take to load in its child process.",
        flag="--load-timeout",
        key="load_timeout",
        minimum=0.1,
    ),
    Option("verify_only", "bool", FIELD, "onnxruntime/openvino: check outputs against PyTorch fp32 without timing."),
    Option(
        "isolate",
        "bool",
        FIELD,
        "Measure in this process (debugging): no child process, no timeouts.",
        flag="--no-isolation",
        negate=True,
    ),
    Option(
        "co_runners",
        "int",
        FIELD,
        "Other measurements running at the same time on other cores or devices "
        "(set by --parallel and --duet; part of the scenario's identity).",
        minimum=1,
        identity=True,
    ),
    Option(
        "repeats",
        "int",
        FIELD,
        "Measure each scenario in K separate processes, interleaved with the other "
        "scenarios' in randomised rounds, so intervals and verdicts see process-to-process variance.",
        minimum=1,
    ),
    Option(
        "tags",
        "words",
        FIELD,
        "Tag recorded on the run (repeatable).",
        flag="--tag",
        repeat=True,
        key="tag",
        aliases=("tags",),
    ),
    Option("out", "str", FIELD, "Folder for the Parquet measurement files, or an fsspec URL (s3://, gs://, hf://...)."),
)


def _field_default(opt: Option) -> Option:
    """The option with its default read from the field it sets (RunOptions, or StopRule for a
    ``rule.`` target): each core default is declared once, on the harness's types."""
    if opt.default is not FIELD:
        return opt
    cls, attr = (StopRule, opt.target.split(".", 1)[1]) if opt.target else (RunOptions, opt.name)
    f = cls.__dataclass_fields__[attr]
    default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[operator]
    return replace(opt, default=str(default) if isinstance(default, Path) else default)


#: Every backend takes these. Axes first (a config run entry's lists expand to their product).
CORE: tuple[Option, ...] = tuple(_field_default(o) for o in _DECLARED)

CORE_BY_NAME = {o.name: o for o in CORE}
