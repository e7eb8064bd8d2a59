"""A system: the unit of hardware a result ran on.

One record describes a whole machine or cluster: the accelerator (vendor, model name, memory of one),
accelerators per node, nodes, the host CPU (model, sockets, cores per node), host memory, the
accelerator interconnect, and where known the system's name, availability and cloud instance. It is
the contract's ``hardware`` object: benchdb's own fingerprint of one device is a system of one
accelerator (or of none, for a CPU), and the identity rules (:func:`benchdb.schema.identity.hardware_id`)
count the system fields only where they differ from that, so every earlier id stays the same, and
this machine described by ``benchdb hardware --format yaml`` keeps the id of its own runs.

A result records how it used its system in its options (so that it is part of the result's
identity): ``accelerators`` (how many it ran on) and ``parallelism`` (tensor, pipeline, expert and
data parallelism, DP attention, a prefill/decode split and its worker counts).

People describe a system by hand in a small YAML or JSON file (``--hardware-file``)::

    system_name: 8x H200 SXM (example)
    accelerator: {vendor: NVIDIA, name: NVIDIA H200-SXM-141GB, memory: 141GB}
    accelerators_per_node: 8
    nodes: 1
    cpu: {model: Intel Xeon Platinum 8480C, sockets: 2, cores: 112}
    host_memory: 2TiB
    interconnect: NVLink 4
    availability: available
    # how a server uses it (benchdb run --url): part of each result's identity
    accelerators: 8
    parallelism: {tp: 8}
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchdb.errors import BenchdbError, clip

#: Accelerator kinds benchdb knows (a device family of its own runs, or a published system's).
KINDS = ("cuda", "rocm", "xpu", "mps", "tpu", "npu", "gpu", "cpu", "remote", "unknown")
#: The system keys beyond a device fingerprint's, in the order ``benchdb hardware`` prints them.
SYSTEM_KEYS = (
    "accelerators_per_node",
    "nodes",
    "cpu_sockets",
    "host_memory_bytes",
    "interconnect",
    "system_name",
    "availability",
    "cloud",
    "instance",
)
AVAILABILITY = ("available", "preview", "rdi")
#: Parallelism keys a result may record, with their types; ``prefill`` and ``decode`` hold the
#: same per-phase keys for a disaggregated deployment.
_PARALLEL_INT = ("tp", "pp", "ep", "dp", "workers", "nodes")
_PARALLEL_BOOL = ("dp_attention", "disaggregated")
_PHASES = ("prefill", "decode")
_USE_KEYS = ("accelerators", "parallelism")

_SIZE = re.compile(r"^\s*(?:(\d+)\s*x\s*)?(\d+(?:\.\d+)?)\s*([kmgtp]i?b?|b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "p": 10**15,
    "pb": 10**15,
    "ki": 2**10,
    "kib": 2**10,
    "mi": 2**20,
    "mib": 2**20,
    "gi": 2**30,
    "gib": 2**30,
    "ti": 2**40,
    "tib": 2**40,
    "pi": 2**50,
    "pib": 2**50,
}
#: Vendor names as published, to the kind of device benchdb files them under.
_VENDOR_KIND = (
    ("nvidia", "NVIDIA", "cuda"),
    ("amd", "AMD", "rocm"),
    ("instinct", "AMD", "rocm"),
    ("intel", "Intel", "xpu"),
    ("gaudi", "Intel", "xpu"),
    ("google", "Google", "tpu"),
    ("tpu", "Google", "tpu"),
    ("qualcomm", "Qualcomm", "npu"),
    ("apple", "Apple", "mps"),
)


class SystemError(BenchdbError):  # noqa: A001 - the name says what it is about; never caught as the builtin
    """A system description cannot be read: the message names the field and what to write."""


def parse_size(value: Any) -> int | None:
    """Bytes from a published size: ``141GB``, ``192 GiB``, ``1.5TiB``, ``24x 64GB`` (a count of
    modules), an int of bytes; None for empty, ``N/A`` or text that names no size (a memory
    *configuration* such as ``HBM3``)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value) if math.isfinite(value) and value > 0 else None
    text = str(value).strip()
    m = _SIZE.match(text.replace(",", ""))
    if not m:
        return None
    count, number, unit = int(m.group(1) or 1), float(m.group(2)), (m.group(3) or "").lower()
    factor = _SIZE_UNITS.get(unit)
    if factor is None or number <= 0:
        return None
    return int(count * number * factor)


def vendor_kind(name: str | None, vendor: str | None = None) -> tuple[str | None, str]:
    """(vendor, kind) of an accelerator from its vendor or model name; kind ``gpu`` when unknown."""
    for text in (vendor, name):
        low = (text or "").lower()
        for word, canonical, kind in _VENDOR_KIND:
            if word in low:
                return canonical, kind
    return vendor, "gpu"


def _int(doc: Mapping[str, Any], key: str, where: str, minimum: int = 0) -> int | None:
    value = doc.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SystemError(f"{where}: {key} is {clip(repr(value), 60)}; write a whole number >= {minimum}")
    return value


def _text(doc: Mapping[str, Any], key: str, where: str) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise SystemError(f"{where}: {key} must be text, not {type(value).__name__}")
    text = " ".join(str(value).split())
    return text if text and text.upper() != "N/A" else None


def _size(doc: Mapping[str, Any], key: str, where: str) -> int | None:
    value = doc.get(key)
    if value is None or value == "":
        return None
    size = parse_size(value)
    if size is None:
        raise SystemError(f"{where}: {key} {clip(repr(value), 60)} is not a size; write e.g. 141GB or 2TiB")
    return size


def _section(doc: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SystemError(f"{where}: {key} must be a mapping (e.g. {{model: ..., sockets: 2}})")
    return value


def normalize(doc: Mapping[str, Any], where: str = "hardware file") -> dict[str, Any]:
    """The system record (a hardware fingerprint) a hand-written description gives, checked.

    Accepts the record's own keys (``kind``, ``vendor``, ``device_name``, ``memory_bytes``,
    ``cpu_model``, ...) and the friendly sections of the module docstring. The keys ``accelerators``
    and ``parallelism`` say how a result used the system: read them with :func:`usage`."""
    if not isinstance(doc, Mapping):
        raise SystemError(
            f"{where}: expected a mapping of system fields (system_name, accelerator, "
            "accelerators_per_node, nodes, cpu, ...)"
        )
    known = {
        "kind",
        "vendor",
        "device_name",
        "memory_bytes",
        "cpu_model",
        "cores_physical",
        "cores_logical",
        "arch",
        "os",
        "driver",
        "compute_capability",
        "accelerator",
        "cpu",
        "host_memory",
        "memory",
        *SYSTEM_KEYS,
        *_USE_KEYS,
    }
    unknown = sorted(set(doc) - known)
    if unknown:
        raise SystemError(f"{where}: unknown field {unknown[0]!r}; the fields are: {', '.join(sorted(known))}")
    acc = _section(doc, "accelerator", where)
    cpu = _section(doc, "cpu", where)
    name = _text(acc, "name", f"{where}: accelerator") or _text(doc, "device_name", where)
    vendor = _text(acc, "vendor", f"{where}: accelerator") or _text(doc, "vendor", where)
    per_node = _int(doc, "accelerators_per_node", where)
    cpu_model = _text(cpu, "model", f"{where}: cpu") or _text(doc, "cpu_model", where)
    kind = _text(doc, "kind", where)
    if kind is not None and kind.lower() not in KINDS:
        raise SystemError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    if name is None and per_node:
        raise SystemError(
            f"{where}: accelerators_per_node is {per_node} but no accelerator name; write accelerator: {{name: ...}}"
        )
    if name is None:  # a CPU-only system: the CPU is its device
        if cpu_model is None:
            raise SystemError(
                f"{where}: names no accelerator and no CPU; write accelerator: {{name: ...}} or cpu: {{model: ...}}"
            )
        name, kind, per_node = cpu_model, kind or "cpu", 0 if per_node is None else per_node
    else:
        vendor_found, kind_found = vendor_kind(name, vendor)
        vendor, kind = vendor or vendor_found, kind or kind_found
        per_node = 1 if per_node is None else per_node
    nodes = _int(doc, "nodes", where, minimum=1) or 1
    record: dict[str, Any] = {
        "kind": kind.lower(),
        "vendor": vendor,
        "device_name": name,
        "memory_bytes": _size(acc, "memory", f"{where}: accelerator") or _size(doc, "memory_bytes", where),
        "accelerators_per_node": per_node,
        "nodes": nodes,
        "cpu_model": cpu_model,
        "cpu_sockets": _int(cpu, "sockets", f"{where}: cpu", 1) or _int(doc, "cpu_sockets", where, 1),
        "cores_physical": _int(cpu, "cores", f"{where}: cpu", 1) or _int(doc, "cores_physical", where, 1),
        "cores_logical": _int(doc, "cores_logical", where, 1),
        "host_memory_bytes": _size(doc, "host_memory", where) or _size(doc, "host_memory_bytes", where),
        "interconnect": _text(doc, "interconnect", where),
        "system_name": _text(doc, "system_name", where),
        "availability": _text(doc, "availability", where),
        "cloud": _text(doc, "cloud", where),
        "instance": _text(doc, "instance", where),
        "compute_capability": _text(doc, "compute_capability", where),
        "arch": _text(doc, "arch", where),
        "os": _text(doc, "os", where),
        "driver": _text(doc, "driver", where),
    }
    if record["kind"] == "cpu" and record["memory_bytes"] is None:
        record["memory_bytes"] = record["host_memory_bytes"]  # a CPU's memory is the host's
    if record["availability"] is not None:
        record["availability"] = record["availability"].lower()
        if record["availability"] not in AVAILABILITY:
            raise SystemError(
                f"{where}: availability {record['availability']!r} is not one of {', '.join(AVAILABILITY)}"
            )
    return {k: v for k, v in record.items() if v is not None}


def usage(doc: Mapping[str, Any], where: str = "hardware file") -> dict[str, Any]:
    """How a result uses its system, as scenario options: ``accelerators`` and ``parallelism``
    (only what the document gives; empty when it gives neither)."""
    out: dict[str, Any] = {}
    n = _int(doc, "accelerators", where, minimum=1)
    if n is not None:
        out["accelerators"] = n
    if doc.get("parallelism") is not None:
        out["parallelism"] = parallelism(_section(doc, "parallelism", where), f"{where}: parallelism")
    return out


def parallelism(doc: Mapping[str, Any], where: str = "parallelism") -> dict[str, Any]:
    """A parallelism record, checked: tp/pp/ep/dp/workers/nodes whole numbers >= 1, dp_attention and
    disaggregated booleans, prefill/decode the same per phase."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key in _PHASES:
            if value is not None:
                phase = parallelism(_section(doc, key, where), f"{where}.{key}")
                if phase:
                    out[key] = phase
        elif key in _PARALLEL_INT:
            n = _int(doc, key, where, minimum=1)
            if n is not None:
                out[key] = n
        elif key in _PARALLEL_BOOL:
            if value is not None:
                if not isinstance(value, bool):
                    raise SystemError(f"{where}: {key} must be true or false")
                out[key] = value
        else:
            raise SystemError(
                f"{where}: unknown key {key!r}; known: {', '.join((*_PARALLEL_INT, *_PARALLEL_BOOL, *_PHASES))}"
            )
    return out


def read_document(path: str | Path) -> Any:
    """The YAML or JSON document in ``path`` (YAML is a superset of JSON), through the bounded reader."""
    from benchdb.schema import documents

    try:
        return documents.read_document(path)
    except documents.DocumentError as exc:
        raise SystemError(f"{path}: {exc.problem}") from None
    except OSError as exc:
        raise SystemError(f"{path}: {exc.strerror or exc}") from None


def load(path: str | Path) -> dict[str, Any]:
    """The system a hardware file describes (see the module docstring)."""
    return normalize(read_document(path) or {}, str(path))


def load_with_usage(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(system, usage options) from one hardware file."""
    doc = read_document(path) or {}
    return normalize(doc, str(path)), usage(doc if isinstance(doc, Mapping) else {}, str(path))


def node_counts(record: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(accelerators per node, nodes) of a system; a device fingerprint (no system keys) is one
    accelerator, or none for a CPU, on one node; (None, None) for hardware known only by name, and
    for a named system whose node size its source does not publish (InferenceX's GPU keys)."""
    per_node = record.get("accelerators_per_node")
    if per_node is None:
        if record.get("kind") in ("remote", "unknown") or record.get("system_name"):
            return None, None
        per_node = 0 if record.get("kind") == "cpu" else 1
    return int(per_node), int(record.get("nodes") or 1)


def accelerators_of(record: Mapping[str, Any]) -> int | None:
    """All accelerators of a system: per node times nodes (:func:`node_counts`); None when unknown."""
    per_node, nodes = node_counts(record)
    return None if per_node is None or nodes is None else per_node * nodes


def describe(record: Mapping[str, Any]) -> dict[str, Any]:
    """A system record in the hand-written form (:func:`normalize` of it gives the record back):
    what ``benchdb hardware --format yaml`` prints for this machine."""
    out: dict[str, Any] = {}
    if record.get("system_name"):
        out["system_name"] = record["system_name"]
    if record.get("kind") != "cpu":
        acc = {
            "vendor": record.get("vendor"),
            "name": record.get("device_name"),
            "memory": f"{record['memory_bytes'] / 2**30:.0f}GiB" if record.get("memory_bytes") else None,
        }
        out["accelerator"] = {k: v for k, v in acc.items() if v is not None}
    out["kind"] = record.get("kind")
    if record.get("kind") == "cpu" and record.get("vendor"):
        out["vendor"] = record["vendor"]
    out["accelerators_per_node"] = node_counts(record)[0] or 0
    out["nodes"] = int(record.get("nodes") or 1)
    cpu = {
        "model": record.get("cpu_model"),
        "sockets": record.get("cpu_sockets"),
        "cores": record.get("cores_physical"),
    }
    out["cpu"] = {k: v for k, v in cpu.items() if v is not None}
    if record.get("host_memory_bytes"):
        out["host_memory"] = f"{record['host_memory_bytes'] / 2**30:.0f}GiB"
    for key in (
        "cores_logical",
        "compute_capability",
        "arch",
        "interconnect",
        "availability",
        "cloud",
        "instance",
        "os",
    ):
        if record.get(key):
            out[key] = record[key]
    return out
