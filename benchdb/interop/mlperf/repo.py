"""MLPerf Inference results repositories (mlcommons/inference_results_v4.x, v5.x, v6.x): every
performance run of a repository, a division or a submitter folder, with its system and checked
against the repository's published table.

A run is ``<division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1/``
(LoadGen's ``mlperf_log_summary.txt`` + ``mlperf_log_detail.txt``; v6.x endpoint runs write
``performance/result_summary.json`` instead). ``accuracy/`` and ``ranging/`` runs are not results;
compliance audits (``compliance/`` and ``TEST0x`` folders) are counted as skipped.

- System: ``<division>/<submitter>/systems/<system>.json`` -> the hardware record of
  :mod:`benchdb.schema.system` (accelerator, per node, nodes, host CPU sockets and cores (the
  checker's ``host_processor_core_count`` is per processor), memory, interconnect, availability);
  framework, other software stack and OS -> the run's software. No accelerator: a CPU system.
- Model ``mlperf:<benchmark>`` (the checker's names: ``resnet50`` -> ``resnet``), the scenario
  folder's scenario (Interactive stays Interactive; LoadGen's effective scenario is an option).
- Headline: :func:`benchdb.interop.mlperf.rules.headline`, the checker's choice; LoadGen's other figures,
  ``result_summary.json``'s TTFT/TPOT/latency/output lengths, as statistics.
- Accuracy: ``accuracy/accuracy.txt`` (the checker's patterns for the benchmark's metrics), v6.x
  ``accuracy/accuracy_results.json``, else the table's Accuracy string: statistics
  ``accuracy:<metric>`` (unit ``score``, MLPerf's own scale).
- Power: the mean of the analyser's watts in ``spl.txt`` between LoadGen's power_begin and
  power_end (the checker's method) as ``power_w``/``mean``; the table's Power_Result as ``published``.
- The published table (root ``summary_results.json`` of v5.x, ``summary.json`` of v6.x, each
  submitter's ``summary.csv``): every run is compared with its row (Location = the scenario folder):
  accelerator, accelerators per node, nodes, model, scenario, units, result within 0.01 %, power.
  Each disagreement is a line; the run keeps LoadGen's figure and the table's is recorded beside it
  (statistic ``published``). A row marked inferred marks the run's settings ``inferred`` (its
  validity stays LoadGen's: MLCommons publishes it as a result).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop.mlperf import loadgen_log as mlperf
from benchdb.interop.mlperf.runs import Checked, Repository, RepositoryError
from benchdb.interop.mlperf.system_desc import ENDPOINTS, SUMMARY, locate
from benchdb.interop.writer import Imported, SourceError
from benchdb.schema.documents import DocumentError

_COMPLIANCE = re.compile(r"^TEST\d+$")


def discover(paths: list[str]) -> tuple[list[Path], int]:
    """Performance runs' files under ``paths`` (summary logs, v6.x result_summary.json) and how many
    compliance audit runs were passed over. Folders under ``accuracy`` or ``ranging`` are not runs."""
    found: list[Path] = []
    compliance = 0
    for given in map(Path, paths):
        if given.is_file():
            found.append(given)
            continue
        if not given.is_dir():
            raise SourceError(f"{given}: no such file or folder")
        for folder, dirs, files in os.walk(given):
            dirs.sort()
            here = Path(folder)
            names = set(files)
            if SUMMARY not in names and ENDPOINTS not in names:
                continue
            parts = here.relative_to(given).parts if here != given else ()
            if "compliance" in parts or any(_COMPLIANCE.match(p) for p in parts):
                compliance += SUMMARY in names
                continue
            if {"accuracy", "ranging", "code", "measurements"} & {*parts, here.name}:
                continue
            if SUMMARY in names:
                found.append(here / SUMMARY)
            elif here.name == "performance" or (here.name == "run_1" and here.parent.name == "performance"):
                found.append(here / ENDPOINTS)
    return list(dict.fromkeys(found)), compliance


@dataclass
class Report:
    """What `benchdb import mlperf` tells beyond the files it wrote."""

    runs: int = 0
    systems: set[str] = field(default_factory=set)
    compliance: int = 0
    unchanged: int = 0
    checked: int = 0
    reproduced: int = 0
    disagreements: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    rows_without_log: list[str] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)


def import_paths(paths: list[str], out: Path, declared: Any) -> Any:
    """Import every run under ``paths`` into contract files under ``out``: the ImportSummary, with the
    table's disagreements as notes and the counts in its ``detail``."""
    from benchdb.interop import ImportSummary

    summary = ImportSummary()
    report = Report()
    sources, report.compliance = discover(paths)
    if not sources:
        raise SourceError(
            f"no MLPerf runs ({SUMMARY} under performance/run_1, or {ENDPOINTS}) under {', '.join(paths)}"
        )
    repos: dict[Path, Repository] = {}
    bad_systems: dict[Path, int] = {}
    seen: dict[Path, set[str]] = {}
    for src in sources:
        try:
            _import_one(src, out, declared, repos, seen, summary, report)
        except RepositoryError as exc:
            if exc.path not in bad_systems:
                summary.failed.append((exc.path, str(exc)))
            bad_systems[exc.path] = bad_systems.get(exc.path, 0) + 1
        except (SourceError, DocumentError) as exc:
            summary.failed.append((src, str(exc)))
        except OSError as exc:
            summary.failed.append((src, f"cannot read it: {exc.strerror or exc}"))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as exc:
            summary.failed.append((src, f"unexpected content for mlperf ({type(exc).__name__}: {clip(str(exc))})"))
    scope = [Path(os.path.abspath(p)) for p in paths if Path(p).is_dir()]
    for root, repo in repos.items():
        _check_tables(root, repo, seen[root], scope, summary, report)
    for path, n in bad_systems.items():
        if n > 1:
            summary.notes.append(f"mlperf: {n} run(s) of {path.name} not imported (the line above says why)")
    summary.notes += [f"mlperf: table disagrees: {line}" for line in report.disagreements]
    summary.notes += [f"mlperf: published data disagrees: {line}" for line in report.problems]
    summary.notes += [f"mlperf: table row without a performance log: {line}" for line in report.rows_without_log]
    summary.detail = _detail(report)
    return summary


def _import_one(
    src: Path,
    out: Path,
    declared: Any,
    repos: dict[Path, Repository],
    seen: dict[Path, set[str]],
    summary: Any,
    report: Report,
) -> None:
    """One run's files into contract files (nothing written when it fails)."""
    from benchdb.interop import check_size, writer

    loc = locate(src)
    check_size(src)
    if loc is None:
        if src.name != SUMMARY:
            raise SourceError(
                f"a {ENDPOINTS} outside a results repository's "
                "<division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/"
            )
        items, checked = mlperf.parse_log(src), Checked()
    else:
        repo = repos.setdefault(loc.root, Repository(loc.root, declared.mlperf_round))
        seen.setdefault(loc.root, set()).add(loc.location)
        item, checked = repo.check(loc)
        items = [item]
    for item in items:
        declared.apply(item)
    planned = writer.plan_files(items, mlperf.FORMAT_ID, src, out)
    fresh = [p for p in planned if not _unchanged(p)]
    report.unchanged += len(planned) - len(fresh)
    summary.written += writer.write_all(fresh)
    summary.imported.append((src, len(planned)))
    report.runs += 1
    report.systems.update(json.dumps(item.hardware, sort_keys=True) for item in items)
    report.checked += bool(checked.rows)
    report.reproduced += bool(checked.rows) and not checked.disagreements
    report.disagreements += checked.disagreements


def _check_tables(
    root: Path, repo: Repository, seen: set[str], scope: list[Path], summary: Any, report: Report
) -> None:
    """A repository's tables: unreadable ones and bad rows as failures, rows in scope with no run."""
    for path, table in repo.tables.items():
        if isinstance(table, SourceError):
            summary.failed.append((path, str(table)))
            continue
        if table is None:
            continue
        report.tables.append(path)
        summary.failed += [(path, problem) for problem in table.errors]
        for location in table.rows:
            where = root / location
            if not any(s == where or s in where.parents for s in scope):
                continue
            report.problems += [f"{path.name}: {location}: {p}" for p in table.problems.get(location, [])]
            if location not in seen:
                report.rows_without_log.append(f"{path.name}: {location}")


def _unchanged(planned: tuple[Path, dict, list]) -> bool:
    """True when the file exists with this very result (a summary-only result is its metadata)."""
    import pyarrow.parquet as pq

    from benchdb.schema import contract

    path, meta, rows = planned
    if rows or not path.is_file():
        return False
    try:
        stored = (pq.read_schema(path).metadata or {}).get(contract.METADATA_KEY)
    except (OSError, ValueError):
        return False
    return stored == contract.encode_metadata(meta)


def _detail(report: Report) -> str:
    parts = [f"{report.runs} run(s) on {len(report.systems)} system(s)"]
    if report.unchanged:
        parts.append(f"{report.unchanged} unchanged (already written)")
    parts.append(f"skipped {report.compliance} compliance run(s)")
    names = ", ".join(sorted({p.name for p in report.tables}))
    if report.tables and not report.checked:
        parts.append(f"no run has a row in {names}")
    elif report.tables:
        parts.append(
            f"{report.reproduced} of {report.checked} checked run(s) reproduce {names}, "
            f"{len(report.disagreements)} disagreement(s), "
            f"{len(report.rows_without_log)} table row(s) without a performance log, "
            f"{len(report.problems)} disagreement(s) within the table's rows"
        )
    else:
        parts.append("no published table to check against")
    return "; ".join(parts)


def parse(path: Path) -> list[Imported]:
    """One summary log: inside a results repository it is that repository's run (its system, table
    row, accuracy and power); elsewhere a lone log with hardware unknown."""
    located = locate(path)
    if located is not None:
        return [Repository(located.root).run(located)]
    return mlperf.parse_log(path)
