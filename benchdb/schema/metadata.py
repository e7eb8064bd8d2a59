"""The metadata document of a contract file as a typed model (pydantic v2, strict types).

Every field a reader relies on has a type: a mistyped optional field (``"threads": "4"``) rejects
that one file with the field's path, instead of failing a whole ingest batch later. Unknown
fields are kept (a newer runner may add some). Timestamps must carry a UTC offset: a naive
``10:00`` would be read in the ingesting machine's time zone, so it is refused.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError


def _aware(text: str) -> str:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO-8601 timestamp") from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"timestamp {text!r} has no UTC offset; write one, e.g. {text}+00:00 "
            "(naive times would be read in the ingesting machine's time zone)"
        )
    return text


Timestamp = Annotated[str, AfterValidator(_aware)]
#: Integers bounded by the warehouse column that holds them: a value past it rejects its own file,
#: never the batch it was loaded with (Arrow would refuse the whole batch).
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
Count = Annotated[int, Field(ge=1, le=2**31 - 1)]
#: A finite float (JSON's 1e999 parses as infinity).
Finite = Annotated[float, Field(allow_inf_nan=False)]


class _Section(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class Run(_Section):
    run_id: str
    started_at: Timestamp
    host: str
    benchdb_version: str
    software: dict[str, Any]
    config: dict[str, Any]
    git_commit: str | None = None
    tags: list[str] = []


class Hardware(_Section):
    kind: str
    device_name: str
    vendor: str | None = None
    memory_bytes: Int64 | None = None
    compute_capability: str | None = None
    cpu_model: str | None = None
    cores_physical: Int32 | None = None
    cores_logical: Int32 | None = None
    arch: str | None = None
    os: str | None = None
    driver: str | None = None
    # a system (benchdb.schema.system): absent on a device fingerprint, a system of one
    accelerators_per_node: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    nodes: Count | None = None
    cpu_sockets: Count | None = None
    host_memory_bytes: Int64 | None = None
    interconnect: str | None = None
    system_name: str | None = None
    availability: str | None = None
    cloud: str | None = None
    instance: str | None = None


class Model(_Section):
    model_id: str
    revision: str | None = None
    model_type: str | None = None
    architecture: str | None = None
    family: str | None = None
    task: str | None = None
    num_parameters: Int64 | None = None
    flops_per_item: Finite | None = None


class SourceStatistic(_Section):
    """One statistic a foreign tool computed itself (summary-only results carry no samples)."""

    metric: str
    unit: str
    #: mean, min, max, stddev, median, p50, p90, p95, p97, p99, p99.9, value (a headline figure), count
    statistic: str
    value: Finite | Int64


class Source(_Section):
    """Where an imported result came from (`benchdb import`): never set by benchdb's runners."""

    #: optimum-benchmark, pytest-benchmark, transformers-benchmark-v2, hud-v3, mlperf-loadgen
    format: str
    file: str
    tool: str
    tool_version: str | None = None
    #: True: the source kept no raw samples; ``statistics`` are the tool's own figures.
    summary_only: bool = False
    #: How the source computed its percentiles (e.g. ``nearest_rank`` for LoadGen).
    percentile_method: str | None = None
    statistics: list[SourceStatistic] = []


class Scenario(_Section):
    scenario_id: str
    model_id: str
    backend: str
    device: str
    mode: str
    precision: str
    batch_size: Count
    input_shape: str
    status: str
    validity: str
    validity_reasons: list[str]
    primary_metric: str
    timing_method: str
    error: str | None = None
    threads: Int32 | None = None
    load_avg_1m: Finite | None = None
    stop_reason: str | None = None
    started_at: Timestamp | None = None
    settings: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    options: dict[str, Any] | None = None
    #: Processes the scenario was measured in (samples carry their process in `repeat`).
    repeats: Count | None = None
    #: Provenance of a result imported from another tool's file (None for benchdb's own runs).
    source: Source | None = None


class Metadata(_Section):
    contract_version: int
    run: Run
    hardware: Hardware
    model: Model
    scenario: Scenario


_TYPES = {
    "int_type": "int",
    "string_type": "str",
    "dict_type": "dict",
    "list_type": "list",
    "float_type": "float",
    "bool_type": "bool",
    "model_type": "object",
}


def check(meta: dict[str, Any]) -> tuple[str, str] | None:
    """Validate the document; None when valid, else (field path, reason) of the first error."""
    try:
        Metadata.model_validate(meta)
    except ValidationError as exc:
        err = exc.errors()[0]
        path = ".".join(["metadata", *(str(p) for p in err["loc"])])
        kind = err["type"]
        if kind == "missing" or (err.get("input") is None and kind in _TYPES):
            return path, "missing"
        if kind in _TYPES:
            return path, f"expected {_TYPES[kind]}, found {type(err.get('input')).__name__}"
        if kind == "greater_than_equal":
            return path, f"must be >= {err['ctx']['ge']}, found {_short(err.get('input'))}"
        if kind == "less_than_equal":
            return path, (
                f"{_short(err.get('input'))} is out of range: the warehouse column holds at most {err['ctx']['le']}"
            )
        if kind == "finite_number":
            return path, "must be a finite number"
        return path, str(err["msg"]).removeprefix("Value error, ")
    return None


def _short(value: Any) -> str:
    """A value for a message: a huge integer by its size, not its 10,000 digits."""
    if not isinstance(value, int) or abs(value) < 10**30:
        text = str(value)
    else:
        text = f"a {len(str(abs(value)))}-digit integer"
    return text if len(text) <= 60 else text[:57] + "..."
