"""The one definition of what a measurement *is*: scenario key, option sets and every id.

Two results that measure different things never share an identity; two that measure the same
thing always do. Everything else — the contract, the runners, ingest, the views (through the
``series_id`` and ``options_id`` columns stored on ``results``), the gate and change points —
takes its ids from here.

- **Scenario key**: model, backend, device, mode, precision, batch size, input shape, and the
  backend's *options* (the typed set in :mod:`benchdb.schema.optionsets`: threads, execution
  providers, performance hint, ...), by their hash ``options_id``. The full options are stored
  as JSON beside the hash. Precision is the precision the engine actually ran (an OpenVINO result
  asked for bf16 but compiled as f32 is keyed ``fp32``, its options record ``precision_hint``).
  Generated tokens are part of the input shape where a backend measures generation.
- **scenario_id**: a scenario inside one run (the key plus the run id); the id of a result.
- **series_id**: a scenario on one piece of hardware across runs (the key plus the hardware id):
  what trends, change points, ``results_latest`` and the gate group by.
- **hardware_id**: the normalised fingerprint of a system (:mod:`benchdb.schema.system`): a device
  is a system of one accelerator, an 8-GPU node or a rack has its counts and interconnect in the id.
  The host name is deliberately *not* part of it: two identical machines are the same hardware,
  and a host is renamed more often than its CPU changes. The host stays on ``runs.host``
  (filterable in every view that joins runs).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

#: The scenario key, in order. ``options_id`` is the hash of the scenario's ``options`` object.
SCENARIO_KEY = ("model_id", "backend", "device", "mode", "precision", "batch_size", "input_shape", "options_id")
#: The key's fields a scenario holds as they are (its ``options`` stand for ``options_id``), in key order:
#: every other list of them (a contract file's key columns, a change point's, what a comparison shows)
#: is built from this one.
SCENARIO_FIELDS = tuple(k for k in SCENARIO_KEY if k != "options_id")
#: The contract v1 key (no options), kept to verify the ids of files written by benchdb 0.1.
SCENARIO_KEY_V1 = SCENARIO_KEY[:-1]

#: Fingerprint fields that identify a piece of hardware. Drivers and software are not part of
#: it: a driver upgrade on the same machine is a change to compare, not a new machine.
HARDWARE_IDENTITY = (
    "kind",
    "vendor",
    "device_name",
    "memory_gib",
    "compute_capability",
    "cpu_model",
    "cores_logical",
    "arch",
)
#: Identity fields added after 0.1; they count only when present, so older ids stay the same.
#: The system fields (benchdb.schema.system): the accelerator interconnect when given; the
#: accelerator and node counts only where they differ from one device's (one accelerator, or none
#: for a CPU, on one node), so a device's id is its id as a system of one, and a machine described
#: by hand (`benchdb hardware --format yaml`) keeps the id of its own runs. A described system's
#: name when given: published systems differ in what the other fields do not hold (host cores and
#: memory, chassis), so two vendors' 8x H200 nodes with the same CPU are two systems, not one row
#: carrying whichever name came last; benchdb's own fingerprints have no name, so their ids stay.
HARDWARE_IDENTITY_OPTIONAL = ("cpu_part", "interconnect", "accelerators_per_node", "nodes", "system_name")

#: Device families that come in numbered units; a bare name means unit 0.
_INDEXED = ("cuda", "rocm", "xpu", "gpu", "npu", "dml")
_DEVICE = re.compile(r"^([a-z]+)(?:[:.](\d+))?$")


def _digest(payload: Any, n: int) -> str:
    return _text_digest(json.dumps(payload, separators=(",", ":"), sort_keys=True), n)


def _text_digest(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def canonical_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Options in canonical form: keys sorted, unset (None) values dropped, lists kept in order
    (execution providers are a priority list), through JSON so types are plain."""
    return json.loads(_options_text(options))


def options_id(options: Mapping[str, Any] | None) -> str:
    """Hash of the canonical options (the same options always give the same id)."""
    return _text_digest(_options_text(options), 16)


def _options_text(options: Mapping[str, Any] | None) -> str:
    """The canonical options as the JSON text :func:`_digest` hashes."""
    clean = {k: v for k, v in sorted((options or {}).items()) if v is not None}
    return _canonical_text(json.dumps(clean, separators=(",", ":"), sort_keys=True))


# The files of a run nearly all share their options, and ingest asks for each file's options id
# several times (its scenario id, its series id): the round trip through JSON is done once per
# distinct text. A small bound: a hostile file's huge options are not kept long.
@lru_cache(maxsize=256)
def _canonical_text(text: str) -> str:
    return json.dumps(json.loads(text), separators=(",", ":"), sort_keys=True)


def shape_fields(input_shape: str | None) -> dict[str, str]:
    """An input shape's ``name=value`` parts (``seq_len=128,new_tokens=8``) as a dict."""
    return dict(part.split("=", 1) for part in str(input_shape or "").split(",") if "=" in part)


def normalize_device(device: str) -> str:
    """One spelling per device across backends: lower case, ``cuda`` -> ``cuda:0``, OpenVINO's
    ``GPU.1`` -> ``gpu:1``; ``cpu``, ``mps`` and names benchdb does not know stay as they are."""
    text = str(device).strip().lower()
    m = _DEVICE.match(text)
    if not m:
        return text
    family, index = m.group(1), m.group(2)
    if family in _INDEXED:
        return f"{family}:{index or 0}"
    return family if index is None else f"{family}:{index}"


def scenario_key(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The key of a scenario described by a mapping with the key fields and ``options``."""
    out = {k: scenario[k] for k in SCENARIO_FIELDS}
    out["options_id"] = options_id(scenario.get("options"))
    return out


def scenario_key_tuple(scenario: Mapping[str, Any]) -> tuple:
    """:func:`scenario_key` as a tuple in :data:`SCENARIO_KEY` order (hashable): equal for a planned
    scenario and for the file that measured it."""
    key = scenario_key(scenario)
    return tuple(key[k] for k in SCENARIO_KEY)


def scenario_id(run_id: str, scenario: Mapping[str, Any]) -> str:
    """Deterministic id of a scenario inside a run (the id of its result)."""
    key = scenario_key(scenario)
    return _digest([run_id] + [key[k] for k in SCENARIO_KEY], 32)


def scenario_id_v1(run_id: str, scenario: Mapping[str, Any]) -> str:
    """The scenario id contract v1 files carry (benchdb 0.1: no options in the key)."""
    payload = json.dumps([run_id] + [scenario[k] for k in SCENARIO_KEY_V1], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def series_id(scenario: Mapping[str, Any], hardware_id: str) -> str:
    """A scenario on one piece of hardware across runs. ``scenario`` holds the key fields and
    either ``options`` or an already computed ``options_id``."""
    key = dict(scenario)
    if "options_id" not in key:
        key["options_id"] = options_id(scenario.get("options"))
    return _digest([key[k] for k in SCENARIO_KEY] + [hardware_id], 32)


def hardware_id(fingerprint: Mapping[str, Any]) -> str:
    """A stable id from a normalised hardware fingerprint (case, spacing and memory rounding)."""
    norm: dict[str, Any] = {}
    for k in HARDWARE_IDENTITY + HARDWARE_IDENTITY_OPTIONAL:
        if k == "memory_gib":
            mem = fingerprint.get("memory_bytes")
            v: Any = round(mem / 2**30) if isinstance(mem, (int, float)) and mem else None
        else:
            v = fingerprint.get(k)
        if isinstance(v, str):
            v = " ".join(v.lower().split())
        if k == "accelerators_per_node" and v == (0 if fingerprint.get("kind") == "cpu" else 1):
            continue
        if k == "nodes" and v == 1:
            continue
        if v is None and k in HARDWARE_IDENTITY_OPTIONAL:
            continue
        norm[k] = v
    return hashlib.sha256(json.dumps(norm, sort_keys=True).encode()).hexdigest()[:16]


def arch_id(model: Mapping[str, Any]) -> str:
    """A model architecture record: the model id at a revision."""
    key = json.dumps([model.get("model_id"), model.get("revision")])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def change_id(series_id: str, run_id: str) -> str:
    """A change point: a series and the first run after its shift."""
    return hashlib.sha256(f"{series_id}|{run_id}".encode()).hexdigest()[:12]
