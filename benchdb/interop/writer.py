"""The shared writer of `benchdb import`: one foreign result becomes one contract file.

A format module turns a file into :class:`Imported` results (all of them, or it raises
:class:`SourceError`: nothing from a bad file is written). :func:`write_all` writes them through
the contract's atomic writer. Ids are deterministic (the run id comes from the source's content
and time), so importing the same file again writes the same files, which ingest skips.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchdb import __version__
from benchdb.errors import BenchdbError, clip
from benchdb.paths import hidden
from benchdb.schema import contract, identity

#: Units of values that are never negative: the contract's, and token counts.
NEVER_NEGATIVE = (*contract.NON_NEGATIVE_UNITS, "tokens")


class SourceError(BenchdbError):
    """A foreign file cannot be imported: the message names the problem (the caller adds the file)."""


@dataclass
class Imported:
    """One result read from a foreign file, in benchdb's terms."""

    model_id: str
    backend: str
    device: str
    mode: str
    precision: str
    batch_size: int
    input_shape: str
    #: metric -> (unit, [values in measurement order]); empty for summary-only results.
    samples: dict[str, tuple[str, list[float]]] = field(default_factory=dict)
    #: Contract rows (metric, unit, iteration, t_offset_s, value) where a result's samples have
    #: their own iterations and times (a serving load point: a request per iteration, several
    #: ITL rows each); written instead of ``samples``.
    rows: list[tuple[str, str, int, float, float]] = field(default_factory=list)
    primary_metric: str = "latency_s"
    options: dict[str, Any] = field(default_factory=dict)
    hardware: dict[str, Any] = field(default_factory=lambda: {"kind": "unknown", "device_name": "unknown"})
    model: dict[str, Any] = field(default_factory=dict)
    started_at: str | None = None
    host: str = "unknown"
    git_commit: str | None = None
    software: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    #: Results of one source run share this key (and so one benchdb run id).
    run_key: str = ""
    status: str = "ok"
    error: str | None = None
    validity: str = "valid"
    validity_reasons: list[str] = field(default_factory=list)
    timing_method: str = "source"
    threads: int | None = None
    tool: str = ""
    tool_version: str | None = None
    summary_only: bool = False
    percentile_method: str | None = None
    #: The source's own figures: (metric, unit, statistic, value).
    statistics: list[tuple[str, str, str, float]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    #: What the source meant by its figures and how benchdb recomputed its own (serving tools).
    definitions: dict[str, Any] = field(default_factory=dict)
    #: What benchdb found in the result beyond its rows (a serving load point's steady state).
    extra: dict[str, Any] = field(default_factory=dict)

    def values(self, metric: str) -> list[float]:
        """The values of ``metric`` this result holds (from ``rows`` or ``samples``)."""
        if self.rows:
            return [r[4] for r in self.rows if r[0] == metric]
        return list(self.samples.get(metric, ("", []))[1])


def utc_iso(value: Any, what: str = "date") -> str | None:
    """An ISO timestamp with a UTC offset from a source's time (ISO text, naive = UTC, or epoch s);
    None where the source gives none. A time that cannot be read is a SourceError naming ``what``:
    the result's time is part of its run's identity, never guessed."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), tz=timezone.utc).isoformat()
        except (OverflowError, ValueError, OSError):
            raise SourceError(f"{what} {value!r} is not a time in epoch seconds") from None
    text = str(value).strip()
    try:
        dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        for layout in ("%Y%m%d_%H%M%S", "%Y%m%d-%H%M%S"):  # transformers benchmark_v2; vllm bench serve
            try:
                dt = datetime.strptime(text, layout)
                break
            except ValueError:
                continue
        else:
            raise SourceError(
                f"{what} {clip(text, 60)!r} is not a date (expected ISO 8601, e.g. "
                "2026-11-25T15:37:25Z, or epoch seconds)"
            ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.isoformat()


def cpu_vendor(name: str | None) -> str | None:
    """The CPUID vendor string benchdb's own CPU fingerprint records, from a CPU model name, so an
    imported result can share the hardware id of a native run on the same machine."""
    text = (name or "").lower()
    if "intel" in text:
        return "GenuineIntel"
    if "amd" in text:
        return "AuthenticAMD"
    return None


def run_id_for(started_at: str, digest: str) -> str:
    """A time-ordered (v7 layout) UUID whose time is the source's and whose bits come from ``digest``."""
    ms = int(datetime.fromisoformat(started_at).timestamp() * 1000) & ((1 << 48) - 1)
    rand = int(digest[:32], 16)
    value = ms << 80 | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("_")[:80] or "result"


def _document(item: Imported, fmt: str, source: Path, file_hash: str, fallback_time: str) -> tuple[dict, list]:
    started = item.started_at or fallback_time
    run_id = run_id_for(started, hashlib.sha256(f"{fmt}|{file_hash}|{item.run_key}".encode()).hexdigest())
    run = {
        "run_id": run_id,
        "started_at": started,
        "host": item.host,
        "benchdb_version": __version__,
        "software": item.software,
        "config": {"imported_from": fmt, **item.config},
        "git_commit": item.git_commit,
        "tags": [f"import:{fmt}"],
    }
    hardware = {k: v for k, v in item.hardware.items() if v is not None}
    model = {"model_id": item.model_id, **{k: v for k, v in item.model.items() if v is not None}}
    source_doc = {
        "format": fmt,
        "file": str(source),
        "tool": item.tool or fmt,
        "tool_version": item.tool_version,
        "summary_only": item.summary_only,
        "percentile_method": item.percentile_method,
        "definitions": [{"metric": m, **d} for m, d in item.definitions.items()] or None,
        "statistics": [{"metric": m, "unit": u, "statistic": s, "value": float(v)} for m, u, s, v in item.statistics],
    }
    scenario = {
        **{k: getattr(item, k) for k in identity.SCENARIO_FIELDS},
        "device": identity.normalize_device(item.device),
        "batch_size": int(item.batch_size),
        "options": {**item.options, "source": fmt},
        "status": item.status,
        "error": item.error,
        "validity": item.validity,
        "validity_reasons": list(item.validity_reasons),
        "primary_metric": item.primary_metric,
        "timing_method": item.timing_method,
        "threads": item.threads,
        "started_at": started,
        "settings": item.settings,
        "source": source_doc,
        **({"extra": item.extra} if item.extra else {}),
    }
    try:
        meta = contract.build_metadata(run=run, hardware=hardware, model=model, scenario=scenario)
    except contract.ContractError as exc:
        raise SourceError(f"cannot be expressed as a benchdb result ({exc})") from None
    rows = [(m, u, int(i), float(t), float(v)) for m, u, i, t, v in item.rows]
    for metric, (unit, values) in ({} if item.rows else item.samples).items():
        for i, v in enumerate(values):
            rows.append((metric, unit, i, 0.0, float(v)))
    return meta, rows


def plan_files(items: list[Imported], fmt: str, source: Path, out: Path) -> list[tuple[Path, dict, list]]:
    """The contract files a source's results become (nothing written yet): bad values fail here."""
    data = source.read_bytes()
    file_hash = hashlib.sha256(data).hexdigest()
    mtime = datetime.fromtimestamp(source.stat().st_mtime, tz=timezone.utc).isoformat()
    planned, seen = [], set()
    for item in items:
        series = [(m, v) for m, (_u, values) in item.samples.items() for v in values]
        series += [(r[0], r[4]) for r in item.rows]
        bad = [(m, v) for m, v in series if not isinstance(v, (int, float)) or isinstance(v, bool) or v != v]
        if bad:
            raise SourceError(f"metric {bad[0][0]} has a non-numeric value {bad[0][1]!r}")
        units = {m: u for m, (u, _v) in item.samples.items()} | {r[0]: r[1] for r in item.rows}
        negative = [(m, v) for m, v in series if v < 0 and units[m] in NEVER_NEGATIVE]
        if negative:
            raise SourceError(
                f"metric {negative[0][0]} has a negative value {negative[0][1]:g}: a time, size or "
                "count cannot be negative"
            )
        if item.status == "ok" and not item.summary_only and not item.values(item.primary_metric):
            raise SourceError(f"{item.model_id}: no {item.primary_metric} values (the source kept no samples)")
        meta, rows = _document(item, fmt, source, file_hash, mtime)
        sid = meta["scenario"]["scenario_id"]
        if sid in seen:
            raise SourceError(
                f"two results with the same key ({item.model_id}, {item.input_shape}); the file repeats a benchmark"
            )
        seen.add(sid)
        # a source's name or a model id may start with '.' (`./models/llama`): the folder and file
        # named after them must not, or ingest would skip them as hidden (paths.hidden)
        folder = f"{_visible(slug(source.stem), 'source')}-{file_hash[:8]}"
        name = f"{slug(fmt)}/{folder}/{_visible(slug(item.model_id), 'model')}-{sid[:12]}.parquet"
        planned.append((out / name, meta, rows))
    return planned


def _visible(name: str, instead: str) -> str:
    """``name`` as a file name ingest reads: without the leading dots that would hide it."""
    while hidden(name):
        name = name[1:]
    return name or instead


def write_all(planned: list[tuple[Path, dict, list]]) -> list[Path]:
    """Write planned files atomically; on failure remove the ones this call wrote."""
    written: list[Path] = []
    try:
        for path, meta, rows in planned:
            written.append(contract.write_scenario(path, meta, contract.samples_table(meta, rows)))
    except BaseException:
        for p in written:
            p.unlink(missing_ok=True)
        raise
    return written
