"""MkDocs hook: the field tables of reference/contract.md, generated from the contract's code.

The sample columns come from ``benchdb.schema.contract`` (``KEY_FIELDS``, ``SAMPLE_FIELDS``), the
metadata document's fields from the typed models in ``benchdb.schema.metadata``; a field's text is
its ``#:`` comment there, else the line in ``DESCRIPTIONS`` below. A field with neither fails the
build (mkdocs --strict), so a new field cannot reach a release undocumented.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKER = "<!-- contract-fields -->"

#: What each field holds, where its code has no ``#:`` comment.
DESCRIPTIONS = {
    "run_id": "The run's time-ordered UUID (the same as `metadata.run.run_id`).",
    "scenario_id": "Identifies the scenario within its run: a hash of the run id, the key and the options.",
    "model_id": "The model spec as given to `--model` (`matmul:256`, `tiny:bert`, a folder, a Hub id).",
    "backend": "The backend's name: numpy, pytorch, onnxruntime, openvino, ort-web, openai, userbench.",
    "device": "The device in canonical form (`cpu`, `cuda:0`, ...).",
    "mode": "The backend's execution mode (`eager`, `compile`, `opt-all`, `latency`, ...).",
    "precision": "fp32, fp16, bf16, fp64, int8, int4.",
    "batch_size": "Items per call.",
    "input_shape": "The input besides the batch, as `name=value` pairs (`seq_len=32`, `image=32x32`).",
    "metric": "What the row measures: `latency_s`, `ttft_s`, `tpot_s`, `peak_memory_bytes`, `power_w`, ...",
    "unit": "The value's unit: s, bytes, W, J, pct, Hz, MHz, C, items/s, tokens/s, flops, count, ...",
    "iteration": "The timed iteration within its process, from 0.",
    "t_offset_s": "Seconds since the scenario started (for timelines).",
    "value": "The measured value, in `unit`.",
    "repeat": "The process (0 .. repeats-1) the sample was measured in: with `--repeats K` a scenario is "
    "measured in K separate processes. Read as 0 from a contract 1 file.",
    "contract_version": "The contract version the file was written in (1 or 2; both are read).",
    "run": "The run the scenario belongs to: when, where, with what software and configuration.",
    "hardware": "The hardware fingerprint: the device measured and its host (or a published system).",
    "model": "The model measured.",
    "scenario": "The scenario: its key, options, outcome and how it was timed.",
    "run.run_id": "A time-ordered UUID: letters, digits, `.`, `_` and `-`, at most 128 characters.",
    "run.started_at": "When the run started.",
    "run.host": "The machine's host name.",
    "run.benchdb_version": "The benchdb that wrote the file.",
    "run.software": "Versions of the libraries the run used (Python, torch, onnxruntime, ...).",
    "run.config": "The run's resolved configuration.",
    "run.git_commit": "The commit of the code measured, when it is a git checkout.",
    "run.tags": "Labels given with `--tag`.",
    "hardware.kind": "cpu, cuda, xpu, ... : what the device is.",
    "hardware.device_name": "The device's name as the driver reports it.",
    "hardware.vendor": "The device's vendor.",
    "hardware.memory_bytes": "The device's memory.",
    "hardware.compute_capability": "A CUDA device's compute capability.",
    "hardware.cpu_model": "The host CPU's model name.",
    "hardware.cores_physical": "Physical CPU cores.",
    "hardware.cores_logical": "Logical CPU cores.",
    "hardware.arch": "CPU architecture (x86_64, aarch64, ...).",
    "hardware.os": "Operating system.",
    "hardware.driver": "Accelerator driver version.",
    "hardware.accelerators_per_node": "A system's accelerators per node.",
    "hardware.nodes": "A system's nodes.",
    "hardware.cpu_sockets": "A system's CPU sockets per node.",
    "hardware.host_memory_bytes": "A system's host memory per node.",
    "hardware.interconnect": "A system's interconnect between accelerators or nodes.",
    "hardware.system_name": "A system's name, as published.",
    "hardware.availability": "A published system's availability (available, preview, research).",
    "hardware.cloud": "The cloud the system was rented from.",
    "hardware.instance": "The cloud instance type.",
    "model.model_id": "As the scenario's `model_id`.",
    "model.revision": "The model's revision (a Hub commit).",
    "model.model_type": "The model's type (`bert`, `llama`, ...).",
    "model.architecture": "The model's architecture class.",
    "model.family": "The model family, for the compatibility matrix.",
    "model.task": "The model's task.",
    "model.num_parameters": "Parameter count.",
    "model.flops_per_item": "Floating-point operations per item, when known.",
    "scenario.scenario_id": "As the column.",
    "scenario.model_id": "As the column; must equal `model.model_id`.",
    "scenario.backend": "As the column.",
    "scenario.device": "As the column.",
    "scenario.mode": "As the column.",
    "scenario.precision": "As the column.",
    "scenario.batch_size": "As the column.",
    "scenario.input_shape": "As the column.",
    "scenario.status": "ok, failed, oom, timeout, unsupported, skipped or mismatch; "
    "a scenario that is not ok has no sample rows.",
    "scenario.validity": "valid or invalid: whether the timing may rank or gate.",
    "scenario.validity_reasons": "Why a timing is invalid (busy_machine, too_few_samples, noisy, ...).",
    "scenario.primary_metric": "The metric the scenario is ranked and gated on.",
    "scenario.timing_method": "How iterations were timed.",
    "scenario.error": "The error text of a scenario that did not run.",
    "scenario.threads": "Threads the backend used.",
    "scenario.load_avg_1m": "The machine's 1-minute load average when the scenario started.",
    "scenario.stop_reason": "Why measuring stopped (target interval reached, time limit, ...).",
    "scenario.started_at": "When the scenario started.",
    "scenario.settings": "The timing loop's settings (min/max time, warm-up, target interval, ...).",
    "scenario.extra": "Backend-specific facts (accuracy against fp32, the model's file, ...).",
    "scenario.options": "The backend's option set (threads, execution providers, performance hint, ...): "
    "part of the scenario's identity. Required from contract 2.",
    "scenario.source.file": "The foreign file it was read from.",
    "scenario.source.tool": "The tool that wrote it.",
    "scenario.source.tool_version": "That tool's version.",
    "scenario.source.statistics": "The tool's own statistics, each one figure of one metric.",
    "scenario.source.statistics.metric": "As the column.",
    "scenario.source.statistics.unit": "As the column.",
    "scenario.source.statistics.value": "The tool's figure.",
}


def _comments(cls: type) -> dict[str, str]:
    """The ``#:`` comment above each field of a class's source."""
    out: dict[str, str] = {}
    pending: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        text = line.strip()
        if text.startswith("#:"):
            pending.append(text[2:].strip())
            continue
        match = re.match(r"(\w+)\s*:", text)
        if match and pending:
            out[match.group(1)] = " ".join(pending).replace("``", "`")
        pending = []
    return out


def _annotated(text: str, meta: list[Any]) -> str:
    """A type's words with what its annotations add: a lower bound, or a timestamp's rule."""
    for item in meta:
        if getattr(getattr(item, "func", None), "__name__", "") == "_aware":
            return "timestamp (ISO 8601, with UTC offset)"
        for bound in (item, *(getattr(item, "metadata", None) or [])):
            low = getattr(bound, "ge", None)
            if low is not None and abs(low) < 2**31:
                text += f" >= {low}"
    return text


def _type(annotation: Any) -> str:
    """A field's type in words."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        return _annotated(_type(base), meta)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(_type(a) for a in args)
    if origin is list:
        return "list of " + _type(typing.get_args(annotation)[0])
    if origin is dict or annotation is dict:
        return "object"
    words = {int: "integer", float: "number", str: "string", bool: "true / false"}
    return words.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _arrow(t: Any) -> str:
    return {"string": "string", "int32": "int32", "float": "float64", "double": "float64"}.get(str(t), str(t))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


Row = tuple[str, str, str, str]


def _nested(annotation: Any) -> type | None:
    """The model a field holds (itself, optional, or as list items), if it holds one."""
    args = typing.get_args(annotation) or (annotation,)
    for arg in (*args, *(a for x in args for a in typing.get_args(x))):
        if inspect.isclass(arg) and hasattr(arg, "model_fields"):
            return arg
    return None


def _walk(model: Any, prefix: str, describe: Callable[[str, str | None], str], out: list[Row]) -> None:
    """A row per field of a metadata model, then the rows of the models it holds."""
    comments = _comments(model)
    nested = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        sub = _nested(field.annotation)
        kind = _annotated(_type(field.annotation), list(field.metadata))
        if sub is not None:
            kind = "list of objects (below)" if typing.get_origin(field.annotation) is list else "object (below)"
        text = describe(path, comments.get(name) or field.description)
        out.append((f"`{path}`", kind, "yes" if field.is_required() else "no", text))
        if sub is not None:
            nested.append((sub, path + "."))
    for sub, sub_prefix in nested:
        _walk(sub, sub_prefix, describe, out)


def rows(root: str | None = None) -> tuple[list[Row], list[Row]]:
    """(column rows, metadata rows): each (name, type, required, description)."""
    if root and root not in sys.path:
        sys.path.insert(0, root)
    from benchdb.schema import contract, metadata

    missing: list[str] = []

    def describe(path: str, comment: str | None) -> str:
        text = comment or DESCRIPTIONS.get(path)
        if not text:
            missing.append(path)
        return text or ""

    columns = []
    for name, arrow_type in (*contract.KEY_FIELDS, *contract.SAMPLE_FIELDS):
        key = " (scenario key)" if (name, arrow_type) in contract.KEY_FIELDS else ""
        columns.append((f"`{name}`", _arrow(arrow_type), "yes, not null", describe(name, None) + key))

    meta: list[Row] = [("`contract_version`", "integer", "yes", describe("contract_version", None))]
    for name, field in metadata.Metadata.model_fields.items():
        if name != "contract_version":
            meta.append((f"`{name}`", "object (below)", "yes", describe(name, None)))
            _walk(field.annotation, name + ".", describe, meta)
    if missing:
        raise ValueError(
            "contract fields with no description (add a #: comment in benchdb/schema/metadata.py "
            "or a line in docs/hooks/contract_reference.py): " + ", ".join(missing)
        )
    return columns, meta


def markdown(root: str | None = None) -> str:
    from benchdb.schema import contract

    columns, meta = rows(root)
    head = ["| field | type | required | what it holds |", "|---|---|---|---|"]
    parts = [
        f"The current contract version is {contract.CONTRACT_VERSION}; benchdb reads versions "
        f"{', '.join(map(str, contract.SUPPORTED_CONTRACT_VERSIONS))}. The Parquet metadata key is "
        f"`{contract.METADATA_KEY.decode()}`.",
        "",
        "### Sample columns",
        "",
        *head,
        *(f"| {' | '.join(_cell(c) for c in r)} |" for r in columns),
        "",
        "### Metadata fields",
        "",
        f"Under the Parquet key-value metadata key `{contract.METADATA_KEY.decode()}`, one JSON "
        "document. Unknown fields are kept, so a newer runner may add some.",
        "",
        *head,
        *(f"| {' | '.join(_cell(c) for c in r)} |" for r in meta),
    ]
    return "\n".join(parts)


def on_page_markdown(markdown_text, page, config, files):
    if page.file.src_uri == "reference/contract.md":
        return markdown_text.replace(MARKER, markdown(str(Path(config.config_file_path).parent)))
    return markdown_text
