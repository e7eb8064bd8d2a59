"""`benchdb run ... --ab BASE CAND` and `--ab-url BASE_URL CAND_URL` (:mod:`benchdb.ab.interleaved`): check the
options, plan, measure both sides with progress on stderr, then print each side's summary and the
command that gates them. With --ab-url both sides are this interpreter; each measures its own endpoint,
on the hardware its file describes."""

from __future__ import annotations

import sys
from dataclasses import replace

from benchdb import __version__
from benchdb.ab.interleaved import AbReport, run_ab
from benchdb.ab.plan import DEFAULT_TRIALS, need_trials, plan_ab
from benchdb.ab.process import SIDES, Side, parse_env, probe
from benchdb.ab.sides import deployments, warn_split
from benchdb.backends.core_options import backend_option, recorded_config
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.text import recorded_url


def check_command(report: AbReport, db: str, threshold: float = 0.05) -> str:
    """The commands that load both runs and gate the candidate on the baseline (at the threshold the
    run's --ab-max-trials judged by, --ab-threshold, where it is not check's default)."""
    import shlex

    from benchdb.parsing import percent_text

    dirs = " ".join(shlex.quote(str(report.reports[s].out_dir)) for s in SIDES)
    tags = report.tags
    # no --metric: check compares the results' own headline metric (ttft_s for a serving load point)
    gate = f" --threshold {percent_text(threshold)}" if threshold != 0.05 else ""
    return (
        f"benchdb ingest {dirs} --db {shlex.quote(db)} && benchdb check --baseline tag:{tags['base']} "
        f"--candidate tag:{tags['cand']}{gate} --db {shlex.quote(db)}"
    )


def _sides(
    params: dict, runs: list[RunOptions], envs: dict[str, dict[str, str]], public: frozenset[str]
) -> tuple[list[RunOptions] | dict[str, list[RunOptions]], dict[str, Side], dict[str, str]]:
    """(runs, or each side's runs; the sides; what each side is, in words): two interpreters for
    --ab, this one twice for --ab-url, each side measuring its own endpoint."""
    if params.get("ab_url"):
        per_side = deployments(params, runs)
        hardware = {
            s: backend_option(per_side[s][0], "hardware_file") or backend_option(per_side[s][0], "server_hardware")
            for s in SIDES
        }
        return (
            per_side,
            {name: Side(name, sys.executable, envs[name], __version__, public) for name in SIDES},
            {s: f"{recorded_url(params['ab_url'][i])} on {hardware[s]}" for i, s in enumerate(SIDES)},
        )
    sides = {name: probe(name, python, envs[name], public) for name, python in zip(SIDES, params["ab"], strict=True)}
    return runs, sides, {s: f"{sides[s].python} (benchdb {sides[s].version})" for s in SIDES}


def _deployments_record(per_side: list[RunOptions] | dict[str, list[RunOptions]]) -> dict:
    """--ab-url: each side's endpoint and hardware, recorded in both sides' runs (config.deployments)."""
    if not isinstance(per_side, dict):
        return {}
    keys = ("url", "hardware_file", "server_hardware")
    return {"deployments": {s: {k: backend_option(per_side[s][0], k) for k in keys} for s in SIDES}}


def cli(ctx, params: dict, runs: list[RunOptions], exclude: list, source: str) -> None:
    """`benchdb run ... --ab BASE CAND` (or --ab-url BASE_URL CAND_URL): plan, measure both sides, print
    the check command."""
    import click
    from click.core import ParameterSource

    from benchdb.plan import config as cfgmod
    from benchdb.plan.driver import summary_rows
    from benchdb.reports.tabular import AB_SUMMARY, for_people
    from benchdb.text import plural
    from benchdb.warehouse import resolve_db

    if params["skip_fresh"]:
        raise BenchdbError("--ab measures both sides afresh; drop --skip-fresh")
    envs = parse_env(params["ab_env"])
    duet = None
    if params.get("duet"):
        from benchdb.plan import parallel

        duet, runs = parallel.workers_for(runs, "2", "--duet")
        click.echo("duet: both sides at once, swapping every trial: " + "; ".join(w.label() for w in duet), err=True)
    explicit = ctx.get_parameter_source("repeats") == ParameterSource.COMMANDLINE
    runs = [replace(o, repeats=o.repeats if explicit or o.repeats > 1 else DEFAULT_TRIALS) for o in runs]
    for o in runs:
        need_trials(o.repeats)
    max_trials = params.get("ab_max_trials") or 0
    if max_trials and max_trials < max(o.repeats for o in runs):
        raise BenchdbError(
            f"--ab-max-trials {max_trials} is below --repeats {max(o.repeats for o in runs)}; "
            "give at least as many (or 0 for exactly --repeats trials)"
        )
    public = frozenset(params.get("ab_env_public") or ())
    unknown = sorted(public - {k for env in envs.values() for k in env})
    if unknown:
        raise BenchdbError(
            f"--ab-env-public {', '.join(unknown)}: no --ab-env sets it; name a variable an "
            "--ab-env gives (e.g. --ab-env cand:BENCH_SCALE=1.1 --ab-env-public BENCH_SCALE)"
        )
    per_side, sides, what = _sides(params, runs, envs, public)
    title = "A/B of two deployments" if params.get("ab_url") else "A/B"
    shard = cfgmod.parse_shard(params["shard"]) if params["shard"] else None
    groups = plan_ab(
        per_side,
        sides,
        exclude=exclude,
        shard=shard,
        deployments=bool(params.get("ab_url")),
        unmatched=lambda rule: click.echo(
            f"warning: exclude rule {rule} matches no scenario of the plan; check its keys and values", err=True
        ),
    )
    warn_split(groups, envs, lambda text: click.echo(text, err=True))
    n_sc = sum(len(g.planned["base"]) for g in groups)
    n_proc = 2 * sum(g.trials for g in groups)
    processes = f"{n_proc} process{'es' if n_proc != 1 else ''}"
    if max_trials > max(g.trials for g in groups):
        processes += f" (up to {2 * sum(max(max_trials, g.trials) for g in groups)} while verdicts are open)"
    if params["dry_run"]:
        for g in groups:
            for sc in g.planned["base"]:
                click.echo(sc.label())
        click.echo(f"{plural(n_sc, 'scenario')}, {processes} (base {what['base']}, cand {what['cand']})")
        return
    click.echo(f"{title}: base {what['base']}, cand {what['cand']}; {plural(n_sc, 'scenario')}, {processes}", err=True)

    def progress(step, name, group, measured, done, total, seconds):
        state = ", ".join(m.outcome.status if m.outcome.status != "ok" else m.outcome.validity for m in measured)
        click.echo(
            f"[{done}/{total}] trial {step.trial + 1}/{max(group.trials, max_trials)} {name} "
            f"{group.label()}: {state} ({seconds:.1f} s)",
            err=True,
        )

    config = {
        "source": source,
        "runs": [recorded_config(o) for o in runs],
        "exclude": exclude,
        "shard": params["shard"],
        "skip_fresh": None,
        **_deployments_record(per_side),
    }
    try:
        report = run_ab(
            groups,
            sides,
            config=config,
            out=runs[0].out,
            tags=runs[0].tags,
            progress=progress,
            max_trials=max_trials,
            threshold=params["ab_threshold"],
            duet=duet,
        )
    except KeyboardInterrupt:
        raise BenchdbError(
            "interrupted: the A/B is incomplete; scenarios whose trials had all run are in their "
            f"files under {runs[0].out}; run the command again for a complete gate",
            exit_code=130,
        ) from None
    rows = {s: summary_rows(report.reports[s]) for s in SIDES}
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
    click.echo(for_people(AB_SUMMARY, table))
    for s in SIDES:
        r = report.reports[s]
        click.echo(f"{s} run {r.run_id} (tag {report.tags[s]}): {plural(len(r.files), 'file')} in {r.out_dir}")
    ok = sum(o.status == "ok" for s in SIDES for o in report.reports[s].outcomes)
    if ok == 0:
        raise BenchdbError(
            "no scenario succeeded on either side; the files record each error (note column of "
            "`benchdb run`): check both " + ("endpoints" if params.get("ab_url") else "interpreters' environments"),
            exit_code=3,
        )
    click.echo(f"check with: {check_command(report, str(resolve_db(params['db'])), params['ab_threshold'])}")
