"""One MLPerf results repository, its systems and tables read once: each run as a benchdb result, compared
with its rows of the published tables."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.interop.mlperf import loadgen_log as mlperf
from benchdb.interop.mlperf import measures
from benchdb.interop.mlperf import published as mlperf_published
from benchdb.interop.mlperf import rules as mlperf_rules
from benchdb.interop.mlperf.measures import read_endpoints
from benchdb.interop.mlperf.system_desc import (
    SIDE_BYTES,
    SUMMARY,
    Located,
    System,
    finite_float,
    precision_of,
    read_system,
    text,
)
from benchdb.interop.mlperf.tables import ROOT_TABLES, Row, Table, read_table
from benchdb.interop.writer import Imported, SourceError, utc_iso

#: Relative difference within which a published figure reproduces.
TOLERANCE = 1e-4
#: A results repository's README title (its first heading): "# MLPerf™ Inference v4.1 results".
_README_ROUND = re.compile(r"MLPerf\W{0,3}\s*Inference\s+(v?\d+\.\d+)", re.IGNORECASE)


@dataclass
class Checked:
    """What importing one run found against the published tables."""

    rows: list[Row] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)  # the run's logs against its rows
    problems: list[str] = field(default_factory=list)  # its rows against themselves


@dataclass
class _Measured:
    """One run as its own files give it (:meth:`Repository._measured`)."""

    head: mlperf_rules.Headline
    stats: list[tuple[str, str, str, float]]
    effective: str | None
    mode: str | None
    verdict: str | None
    reasons: list[str]
    started: str | None
    tool_version: str | None
    power: float | None


class Repository:
    """One results repository: its systems and tables, read once."""

    def __init__(self, root: Path, declared_round: str | None = None):
        self.root = root
        #: ``--round``: the round the user says the repository was submitted to.
        self.declared_round = mlperf_rules.round_name(declared_round) if declared_round else None
        self._own_round: tuple[str, str] | None = None
        self._looked_for_round = False
        self._systems: dict[Path, System | SourceError] = {}
        self.tables: dict[Path, Table | SourceError | None] = {}

    def table(self, path: Path) -> Table | SourceError | None:
        if path not in self.tables:
            try:
                table = read_table(path, self.root) if path.is_file() else None
                if table is not None:
                    table.problems = mlperf_published.table_problems(table)
                self.tables[path] = table
            except SourceError as exc:
                self.tables[path] = exc
            except OSError as exc:
                self.tables[path] = SourceError(f"cannot read it: {exc.strerror or exc}")
        return self.tables[path]

    def tables_for(self, loc: Located) -> list[Table]:
        paths = [self.root / name for name in ROOT_TABLES]
        paths.append(self.root / loc.division / loc.submitter / "summary.csv")
        return [t for t in (self.table(p) for p in paths) if isinstance(t, Table)]

    def system(self, loc: Located) -> System:
        path = loc.systems_json
        if path not in self._systems:
            try:
                self._systems[path] = read_system(path, self.root)
            except SourceError as exc:
                self._systems[path] = exc
        got = self._systems[path]
        if isinstance(got, SourceError):
            raise SystemsJsonError(path, str(got))
        return got

    def round_of(self, rows: list[Row]) -> str:
        """The round the repository was submitted to, whose checker rules judge every run in it
        (the checker's ``--version``): its published table's ``version``, else its README's title
        ("MLPerf Inference v4.1 results"), else its folder's name (``inference_results_v4.1``), else
        ``--round``. Never the LoadGen version a run's log names: submitters may run the previous
        round's LoadGen, and the checker judges them by the round they submitted to."""
        try:
            found = next(
                ((mlperf_rules.round_name(r.version), f"the version in {r.table.name}") for r in rows if r.version),
                None,
            )
            found = found or self._repository_round()
        except SourceError as exc:  # a table's version that is no round: once for the repository
            raise RepositoryError(self.root, f"its published table's version: {exc}") from None
        if self.declared_round and found and found[0] != self.declared_round:
            raise RepositoryError(
                self.root,
                f"--round {self.declared_round} contradicts the repository's own round {found[0]} ({found[1]}); "
                "drop --round",
            )
        got = self.declared_round or (found[0] if found else None)
        if got is None:
            raise RepositoryError(
                self.root,
                "cannot tell which MLPerf round this repository was submitted to (no version in a published "
                "table, no 'MLPerf Inference vX.Y' title in README.md, not a folder named "
                "inference_results_vX.Y); name it: --round v4.1",
            )
        try:
            mlperf_rules.round_rules(got)
        except SourceError as exc:
            raise RepositoryError(self.root, str(exc)) from None
        return got

    def _repository_round(self) -> tuple[str, str] | None:
        """(round, where it was read) from the root table's rows, the README's title or the folder's
        name, once."""
        if not self._looked_for_round:
            self._looked_for_round = True
            for name in ROOT_TABLES:
                table = self.table(self.root / name)
                rows = table.rows.values() if isinstance(table, Table) else ()
                version = next((r.version for r in rows if r.version), None)
                if version:
                    self._own_round = (mlperf_rules.round_name(version), f"the version in {name}")
                    return self._own_round
            readme = self.root / "README.md"
            if readme.is_file():
                from benchdb.schema import documents

                try:
                    head = documents.read_text(readme, max_bytes=SIDE_BYTES, within=self.root, errors="replace")
                except (documents.DocumentError, OSError):
                    head = ""  # an unreadable README says no round; the folder's name may
                title = next((line for line in head.splitlines() if line.startswith("#")), "")
                m = _README_ROUND.search(title)
                if m:
                    self._own_round = (mlperf_rules.round_name(m.group(1)), "the title of README.md")
            m = re.search(r"inference_results_(v\d+\.\d+)", self.root.name)
            if self._own_round is None and m:
                self._own_round = (m.group(1), f"the folder's name {self.root.name}")
        return self._own_round

    def run(self, loc: Located) -> Imported:
        return self.check(loc)[0]

    def check(self, loc: Located) -> tuple[Imported, Checked]:
        """The run at ``loc`` as a benchdb result, and how it compares with the published tables."""
        sysinfo = self.system(loc)
        tables = [t for t in self.tables_for(loc) if loc.location in t.rows]
        checked = Checked(
            rows=[t.rows[loc.location] for t in tables],
            problems=[f"{t.path.name}: {loc.location}: {p}" for t in tables for p in t.problems.get(loc.location, [])],
        )
        version = self.round_of(checked.rows)
        model = mlperf_rules.canonical_model(loc.benchmark)
        # an open-division run's folder names its own model (mobilenet-v1-...); the table names the
        # benchmark whose rules judge it (UsedModel: the folder's name, Model: the benchmark)
        benchmark = next(
            (mlperf_rules.canonical_model(r.model) for r in checked.rows if r.used_model and r.model), model
        )
        scenario = mlperf_rules.canonical_scenario(loc.scenario_folder)
        settings: dict[str, Any] = {
            "division": loc.division,
            "submitter": loc.submitter,
            "mlperf_round": version,
            "location": loc.location,
        }
        run = self._measured(loc, benchmark, scenario, version, settings, checked)
        head, stats, effective, mode, verdict = run.head, run.stats, run.effective, run.mode, run.verdict
        reasons, started, tool_version, power = run.reasons, run.started, run.tool_version, run.power
        if power is not None:
            stats.append(("power_w", "W", "mean", power))
        stats += measures.accuracy_statistics(loc, benchmark, checked.rows)
        if head.inferred_from:
            settings.update(inferred=True, inferred_from=head.inferred_from)
        for row in checked.rows:
            checked.disagreements += self._compare(loc, row, sysinfo, model, scenario, head, power)
            if row.result is not None and row.units is not None:
                stats.append((head.metric, head.unit, "published", row.result * mlperf_rules.UNITS[row.units]))
            if row.power is not None and (row.power_units or "").lower() in ("watts", "w"):
                stats.append(("power_w", "W", "published", row.power))
            elif row.power is not None and (row.power_units or "").lower() == "millijoules":
                stats.append(("energy_per_query_j", "J", "published", row.power / 1e3))
            if row.inferred:
                settings["inferred"] = True
                settings.setdefault("inferred_from", "the published table")
        if checked.rows:  # what `report --sources` counts as checked, and reproduced
            settings["checked_against"] = sorted({r.table.name for r in checked.rows})
            settings["reproduces_table"] = not checked.disagreements
        if checked.disagreements or checked.problems:
            settings["source_disagreements"] = [*checked.disagreements, *checked.problems]
        weights = (
            next((r.weight_data_types for r in checked.rows if r.weight_data_types), None) or sysinfo.weight_data_types
        )
        settings["weight_data_types"] = weights
        digest = hashlib.sha256(
            json.dumps(
                [loc.location, sysinfo.hardware, sysinfo.software, stats, sorted(settings.items(), key=str)],
                sort_keys=True,
                default=str,
            ).encode()
        ).hexdigest()
        hw = sysinfo.hardware
        kind = str(hw.get("kind"))
        item = Imported(
            model_id=f"mlperf:{model}",
            backend=mlperf.FORMAT_ID,
            device=f"{kind}:0" if kind in ("cuda", "rocm", "xpu") else kind,
            mode=scenario,
            precision=precision_of(weights),
            batch_size=1,
            input_shape=f"scenario={scenario},mode={mode or 'unknown'}",
            primary_metric=head.metric,
            options={
                "scenario": scenario,
                "effective_scenario": effective,
                "test_mode": mode,
                "division": loc.division,
                "submitter": loc.submitter,
                "system": loc.system,
                "accelerators": sysinfo.per_node * sysinfo.nodes,
            },
            hardware=dict(hw),
            model={"family": "mlperf", "task": loc.benchmark},
            started_at=started,
            run_key=f"{loc.location}|{digest}",
            validity="valid" if verdict == "VALID" else "invalid",
            validity_reasons=reasons,
            timing_method="loadgen",
            tool="mlcommons-loadgen",
            tool_version=tool_version,
            summary_only=True,
            percentile_method="nearest_rank" if loc.path.name == SUMMARY else None,
            statistics=stats,
            settings={k: v for k, v in settings.items() if v is not None},
            software={**sysinfo.software, **({"mlcommons-loadgen": tool_version} if tool_version else {})},
        )
        return item, checked

    def _measured(
        self, loc: Located, benchmark: str, scenario: str, version: str, settings: dict[str, Any], checked: Checked
    ) -> _Measured:
        """What the run's own files say: its LoadGen summary (or Endpoints result), headline,
        statistics and verdict; ``settings`` and ``checked`` gain what the files add."""
        run_dir = loc.path.parent
        if loc.path.name == SUMMARY:
            lg = mlperf.read_run(loc.path, within=self.root)
            head = mlperf_rules.headline(lg.log, benchmark, scenario, version)
            stats = mlperf.with_headline(lg.statistics, head)
            effective, mode, verdict, reasons = lg.effective_scenario, lg.mode, lg.verdict, lg.reasons
            settings.update(lg.settings)
            started, tool_version = utc_iso(lg.log.get("test_datetime")), lg.version
            power = measures.power(run_dir, lg.log, within=self.root)
        else:
            doc, stats = read_endpoints(loc.path, within=self.root)
            pattern = (
                ((doc.get("run_config") or {}).get("load_pattern") or {})
                if isinstance(doc.get("run_config"), dict)
                else {}
            )
            effective = {"max_throughput": "Offline", "poisson": "Server"}.get(str(pattern.get("type")), scenario)
            head = measures.endpoint_headline(doc, benchmark, scenario, stats)
            stats = [*stats, (head.metric, head.unit, "value", head.value)]
            complete = bool(doc.get("complete")) and not finite_float(doc.get("n_samples_failed"))
            verdict = "VALID" if complete else "INVALID"
            reasons = (
                []
                if complete
                else [f"mlperf: state {doc.get('state')!r}, {doc.get('n_samples_failed')} sample(s) failed"]
            )
            mode, started, tool_version, power = "PerformanceOnly", None, text(doc.get("version")), None
            started_ns = finite_float(doc.get("test_started_at"))
            if started_ns:
                started = utc_iso(started_ns / 1e9 if started_ns > 1e14 else started_ns)
            settings.update({"load_pattern": pattern or None, "duration_ns": doc.get("duration_ns")})
            scenario_dir = self.root / loc.location
            config = measures.read_endpoints_config(scenario_dir, within=self.root)
            if config:
                settings["endpoints_config"] = config
                declared = mlperf_rules.canonical_scenario(str(config.get("type") or ""))
                if (
                    config.get("type")
                    and declared != scenario
                    and not (scenario == "Interactive" and declared == "Server")
                ):
                    checked.disagreements.append(
                        f"config.yaml: {loc.location}: type {config['type']!r}, the scenario folder {scenario!r}"
                    )
        return _Measured(head, stats, effective, mode, verdict, reasons, started, tool_version, power)

    @staticmethod
    def _compare(
        loc: Located,
        row: Row,
        sysinfo: System,
        model: str,
        scenario: str,
        head: mlperf_rules.Headline,
        power: float | None,
    ) -> list[str]:
        out = []

        def differ(what: str, table: Any, ours: Any) -> None:
            out.append(f"{row.table.name}: {loc.location}: {what}: table {table!r}, logs {ours!r}")

        if (row.accelerator or "") != (sysinfo.accelerator or ""):
            differ("accelerator", row.accelerator or "", sysinfo.accelerator or "")
        if (row.per_node or 0) != sysinfo.per_node:
            differ("accelerators per node (a#)", row.per_node, sysinfo.per_node)
        if row.nodes is not None and row.nodes != sysinfo.nodes:
            differ("nodes", row.nodes, sysinfo.nodes)
        table_model = row.used_model or row.model
        if mlperf_rules.canonical_model(table_model) != model:
            differ("model", table_model, model)
        if mlperf_rules.canonical_scenario(row.scenario) != scenario:
            differ("scenario", row.scenario, scenario)
        if row.units is not None and row.units != head.table_unit:
            differ("units", row.units, head.table_unit)
        elif row.result is not None and abs(head.table_value - row.result) > TOLERANCE * abs(row.result):
            # significant digits, not decimals: a bogus 6.9e-09 in a log must not print as 0.0
            differ(f"result ({row.units})", row.result, float(f"{head.table_value:.7g}"))
        if row.power is not None and (row.power_units or "").lower() in ("watts", "w"):
            if power is None:
                differ("power (W)", row.power, None)
            elif abs(power - row.power) > TOLERANCE * abs(row.power):
                differ("power (W)", row.power, float(f"{power:.7g}"))
        return out


class RepositoryError(SourceError):
    """A problem of a file or folder that many runs share (a systems JSON, the repository's round):
    reported once for ``path``, not for each of its runs."""

    def __init__(self, path: Path, problem: str):
        super().__init__(problem)
        self.path = path


class SystemsJsonError(RepositoryError):
    """A run's systems JSON cannot be read."""
