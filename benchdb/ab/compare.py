"""An A/B as one call of the Python API (`benchdb run ... --ab BASE CAND`, or `--ab-url BASE_URL
CAND_URL`): the options checked, both sides planned and measured in interleaved trials
(:mod:`benchdb.ab.interleaved`), each side's summary and the command that gates them. With two
deployments both sides are this interpreter; each measures its own endpoint, on the hardware its
file describes. What a person reads while it runs goes to ``note`` (the command line's stderr)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from benchdb import __version__
from benchdb.ab.interleaved import AbReport, run_ab
from benchdb.ab.plan import DEFAULT_TRIALS, need_trials, plan_ab
from benchdb.ab.process import SIDES, Side, parse_env, probe
from benchdb.ab.sides import deployments, warn_split
from benchdb.backends.core_options import backend_option, recorded_config
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.text import plural, recorded_url

Note = Callable[[str], None]


def _quiet(text: str) -> None:
    pass


def check_command(report: AbReport, db: str, threshold: float = 0.05) -> str:
    """The commands that load both runs and gate the candidate on the baseline (at the threshold the
    run's --ab-max-trials judged by, --ab-threshold, where it is not check's default)."""
    from benchdb.parsing import percent_text

    dirs = " ".join(shlex.quote(str(report.reports[s].out_dir)) for s in SIDES)
    tags = report.tags
    # no --metric: check compares the results' own headline metric (ttft_s for a serving load point)
    gate = f" --threshold {percent_text(threshold)}" if threshold != 0.05 else ""
    return (
        f"benchdb ingest {dirs} --db {shlex.quote(db)} && benchdb check --baseline tag:{tags['base']} "
        f"--candidate tag:{tags['cand']}{gate} --db {shlex.quote(db)}"
    )


@dataclass
class Compared:
    """An A/B planned (``groups``, each side in words in ``what``) and, unless a dry run, measured."""

    groups: list
    what: dict[str, str]
    #: How many processes the trials take ("... (up to N while verdicts are open)").
    processes: str
    urls: bool = False
    report: AbReport | None = None
    #: Per scenario: each side's status and median, their ratio and notes.
    rows: list[dict] = field(default_factory=list)
    #: The commands that ingest both runs and gate the candidate on the baseline.
    check: str = ""

    def scenarios(self) -> int:
        return sum(len(g.planned["base"]) for g in self.groups)

    def plan_lines(self) -> list[str]:
        """A dry run: each scenario's label, then the count of scenarios and processes."""
        lines = [sc.label() for g in self.groups for sc in g.planned["base"]]
        what = self.what
        return [
            *lines,
            f"{plural(self.scenarios(), 'scenario')}, {self.processes} (base {what['base']}, cand {what['cand']})",
        ]

    def side_lines(self) -> list[str]:
        """Each side's run: its id, tag and files."""
        assert self.report is not None
        report = self.report
        return [
            f"{s} run {r.run_id} (tag {report.tags[s]}): {plural(len(r.files), 'file')} in {r.out_dir}"
            for s, r in ((s, report.reports[s]) for s in SIDES)
        ]

    def check_succeeded(self) -> None:
        """Refuse (exit 3) an A/B in which no scenario succeeded on either side."""
        assert self.report is not None
        if not any(o.status == "ok" for s in SIDES for o in self.report.reports[s].outcomes):
            raise BenchdbError(
                "no scenario succeeded on either side; the files record each error (note column of "
                "`benchdb run`): check both " + ("endpoints" if self.urls else "interpreters' environments"),
                exit_code=3,
            )


def _sides(
    pythons: Sequence[str] | None,
    urls: Sequence[str] | None,
    files: Sequence[str] | None,
    runs: list[RunOptions],
    envs: dict[str, dict[str, str]],
    public: frozenset[str],
) -> tuple[list[RunOptions] | dict[str, list[RunOptions]], dict[str, Side], dict[str, str]]:
    """(runs, or each side's runs; the sides; what each side is, in words): two interpreters for
    --ab, this one twice for --ab-url, each side measuring its own endpoint."""
    if urls:
        per_side = deployments(urls, files, runs)
        hardware = {
            s: backend_option(per_side[s][0], "hardware_file") or backend_option(per_side[s][0], "server_hardware")
            for s in SIDES
        }
        return (
            per_side,
            {name: Side(name, sys.executable, envs[name], __version__, public) for name in SIDES},
            {s: f"{recorded_url(urls[i])} on {hardware[s]}" for i, s in enumerate(SIDES)},
        )
    assert pythons is not None
    sides = {name: probe(name, python, envs[name], public) for name, python in zip(SIDES, pythons, strict=True)}
    return runs, sides, {s: f"{sides[s].python} (benchdb {sides[s].version})" for s in SIDES}


def _deployments_record(per_side: list[RunOptions] | dict[str, list[RunOptions]]) -> dict:
    """--ab-url: each side's endpoint and hardware, recorded in both sides' runs (config.deployments)."""
    if not isinstance(per_side, dict):
        return {}
    keys = ("url", "hardware_file", "server_hardware")
    return {"deployments": {s: {k: backend_option(per_side[s][0], k) for k in keys} for s in SIDES}}


def _checked_trials(runs: list[RunOptions], repeats_given: bool, max_trials: int, duet: bool, note: Note):
    """The runs with the A/B's default trials (unless --repeats was given), on --duet's two workers."""
    workers = None
    if duet:
        from benchdb.plan import parallel

        workers, runs = parallel.workers_for(runs, "2", "--duet")
        note("duet: both sides at once, swapping every trial: " + "; ".join(w.label() for w in workers))
    runs = [replace(o, repeats=o.repeats if repeats_given or o.repeats > 1 else DEFAULT_TRIALS) for o in runs]
    for o in runs:
        need_trials(o.repeats)
    if max_trials and max_trials < max(o.repeats for o in runs):
        raise BenchdbError(
            f"--ab-max-trials {max_trials} is below --repeats {max(o.repeats for o in runs)}; "
            "give at least as many (or 0 for exactly --repeats trials)"
        )
    return runs, workers


def compare(
    runs: list[RunOptions],
    exclude: Sequence[dict] = (),
    source: str = "python",
    *,
    pythons: Sequence[str] | None = None,
    urls: Sequence[str] | None = None,
    hardware_files: Sequence[str] | None = None,
    env: Sequence[str] = (),
    env_public: Sequence[str] = (),
    duet: bool = False,
    repeats_given: bool = False,
    max_trials: int = 0,
    threshold: float = 0.05,
    shard: str | None = None,
    skip_fresh: str | None = None,
    dry_run: bool = False,
    db: Any = None,
    note: Note = _quiet,
) -> Compared:
    """Measure ``runs`` on two sides in interleaved trials: the interpreters ``pythons`` (BASE, CAND),
    or this one against the endpoints ``urls`` (each on its ``hardware_files``); the Python API of
    `benchdb run --ab` / `--ab-url`. ``env`` holds ``SIDE:NAME=VALUE`` variables (recorded hashed
    unless named in ``env_public``); ``duet`` runs both sides at once on mirrored cores; trials are
    ``--repeats`` (5 unless ``repeats_given``), then two more at a time up to ``max_trials`` while a
    verdict at ``threshold`` is open. ``check`` of the result gates them on warehouse ``db``."""
    from benchdb.plan import config as cfgmod
    from benchdb.plan.driver import summary_rows
    from benchdb.warehouse import resolve_db

    if skip_fresh:
        raise BenchdbError("--ab measures both sides afresh; drop --skip-fresh")
    envs = parse_env(env)
    runs, workers = _checked_trials(runs, repeats_given, max_trials, duet, note)
    public = frozenset(env_public)
    unknown = sorted(public - {k for e in envs.values() for k in e})
    if unknown:
        raise BenchdbError(
            f"--ab-env-public {', '.join(unknown)}: no --ab-env sets it; name a variable an "
            "--ab-env gives (e.g. --ab-env cand:BENCH_SCALE=1.1 --ab-env-public BENCH_SCALE)"
        )
    per_side, sides, what = _sides(pythons, urls, hardware_files, runs, envs, public)
    groups = plan_ab(
        per_side,
        sides,
        exclude=list(exclude),
        shard=cfgmod.parse_shard(shard) if shard else None,
        deployments=bool(urls),
        unmatched=lambda rule: note(
            f"warning: exclude rule {rule} matches no scenario of the plan; check its keys and values"
        ),
    )
    warn_split(groups, envs, note)
    n_proc = 2 * sum(g.trials for g in groups)
    processes = f"{n_proc} process{'es' if n_proc != 1 else ''}"
    if max_trials > max(g.trials for g in groups):
        processes += f" (up to {2 * sum(max(max_trials, g.trials) for g in groups)} while verdicts are open)"
    done = Compared(groups, what, processes, urls=bool(urls))
    if dry_run:
        return done
    title = "A/B of two deployments" if urls else "A/B"
    note(f"{title}: base {what['base']}, cand {what['cand']}; {plural(done.scenarios(), 'scenario')}, {processes}")

    def progress(step, name, group, measured, finished, total, seconds):
        state = ", ".join(m.outcome.status if m.outcome.status != "ok" else m.outcome.validity for m in measured)
        note(
            f"[{finished}/{total}] trial {step.trial + 1}/{max(group.trials, max_trials)} {name} "
            f"{group.label()}: {state} ({seconds:.1f} s)"
        )

    config = {
        "source": source,
        "runs": [recorded_config(o) for o in runs],
        "exclude": list(exclude),
        "shard": shard,
        "skip_fresh": None,
        **_deployments_record(per_side),
    }
    try:
        done.report = run_ab(
            groups,
            sides,
            config=config,
            out=runs[0].out,
            tags=runs[0].tags,
            progress=progress,
            max_trials=max_trials,
            threshold=threshold,
            duet=workers,
        )
    except KeyboardInterrupt:
        raise BenchdbError(
            "interrupted: the A/B is incomplete; scenarios whose trials had all run are in their "
            f"files under {runs[0].out}; run the command again for a complete gate",
            exit_code=130,
        ) from None
    done.rows = _rows({s: summary_rows(done.report.reports[s]) for s in SIDES})
    done.check = check_command(done.report, str(resolve_db(db)), threshold)
    return done


def from_options(values: Mapping[str, Any], given: Collection[str] = (), *, note: Note = _quiet) -> Compared:
    """`benchdb run --ab` / `--ab-url`'s options as one call: the runs they describe
    (:func:`benchdb.plan.config.runs_from`: ``values`` by parameter name, ``given`` naming those set on
    purpose), the combinations checked, and :func:`compare`."""
    from benchdb.plan.config import check_combinations, runs_from

    runs, exclude, source = runs_from(values, given)
    check_combinations(values)
    return compare(
        runs,
        exclude,
        source,
        pythons=values.get("ab"),
        urls=values.get("ab_url"),
        hardware_files=values.get("ab_hardware_file"),
        env=values.get("ab_env") or (),
        env_public=values.get("ab_env_public") or (),
        duet=bool(values.get("duet")),
        repeats_given="repeats" in given,
        max_trials=values.get("ab_max_trials") or 0,
        threshold=values.get("ab_threshold", 0.05),
        shard=values.get("shard"),
        skip_fresh=values.get("skip_fresh"),
        dry_run=bool(values.get("dry_run")),
        db=values.get("db"),
        note=note,
    )


def _rows(rows: dict[str, list[dict]]) -> list[dict]:
    table = []
    for b, c in zip(rows["base"], rows["cand"], strict=True):
        ratio = c["median_ms"] / b["median_ms"] if b["median_ms"] and c["median_ms"] else None
        note = "; ".join(f"{s}: {r['note']}" for s, r in zip(SIDES, (b, c), strict=True) if r["note"])
        table.append(
            {
                "scenario": b["scenario"],
                "base": b["status"],
                "base_median": b["median_ms"],
                "cand": c["status"],
                "cand_median": c["median_ms"],
                "ratio": f"{ratio:.3f}" if ratio is not None else "",
                "note": note,
            }
        )
    return table
