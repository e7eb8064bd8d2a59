"""`benchdb run ... --ab BASE CAND` (:mod:`benchdb.plan.ab`): check the options, plan, measure both
sides with progress on stderr, then print each side's summary and the command that gates them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from benchdb.backends.base import RunOptions
from benchdb.errors import BenchdbError
from benchdb.plan.ab import DEFAULT_TRIALS, AbReport, need_trials, plan_ab, run_ab
from benchdb.plan.ab_process import SIDES, parse_env, probe


def check_command(report: AbReport, db: str) -> str:
    """The commands that load both runs and gate the candidate on the baseline."""
    import shlex

    dirs = " ".join(shlex.quote(str(report.reports[s].out_dir)) for s in SIDES)
    tags = report.tags
    return (f"benchdb ingest {dirs} --db {shlex.quote(db)} && benchdb check --baseline tag:{tags['base']} "
            f"--candidate tag:{tags['cand']} --db {shlex.quote(db)}")


def _warn_split(groups: list, envs: dict[str, dict[str, str]], warn: Callable[[str], None]) -> None:
    """--ab-env on a variable a bench declares in ENV changes the scenario key of one side: the sides
    become different series, and the check that follows has nothing to compare. Say so before measuring."""
    from benchdb.schema.options import env_differences

    names = set(envs["base"]) | set(envs["cand"])
    split = set()
    for g in groups:
        for b, c in zip(g.planned["base"], g.planned["cand"], strict=True):
            split |= names & env_differences(b.options.get("env"), c.options.get("env"))
    if split:
        warn(f"warning: --ab-env {', '.join(sorted(split))}: the bench declares it in ENV, so it is part of the "
             "scenario's identity and base and cand become different series; `benchdb check` will find nothing "
             "to compare. To gate code with the variable as a setting, give both sides the same value (or leave it "
             "out of ENV)")


def cli(ctx, params: dict, runs: list[RunOptions], exclude: list, source: str) -> None:
    """`benchdb run ... --ab BASE CAND`: plan, measure both sides, print the check command."""
    import click
    from click.core import ParameterSource

    from benchdb.plan import config as cfgmod
    from benchdb.plan.driver import summary_rows
    from benchdb.reports.tabular import render
    from benchdb.schema.database import resolve_db
    from benchdb.text import plural

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
        raise BenchdbError(f"--ab-max-trials {max_trials} is below --repeats {max(o.repeats for o in runs)}; "
                           "give at least as many (or 0 for exactly --repeats trials)")
    public = frozenset(params.get("ab_env_public") or ())
    unknown = sorted(public - {k for env in envs.values() for k in env})
    if unknown:
        raise BenchdbError(f"--ab-env-public {', '.join(unknown)}: no --ab-env sets it; name a variable an "
                           "--ab-env gives (e.g. --ab-env cand:BENCH_SCALE=1.1 --ab-env-public BENCH_SCALE)")
    sides = {name: probe(name, python, envs[name], public) for name, python in zip(SIDES, params["ab"], strict=True)}
    shard = cfgmod.parse_shard(params["shard"]) if params["shard"] else None
    groups = plan_ab(runs, sides, exclude=exclude, shard=shard,
                     unmatched=lambda rule: click.echo(f"warning: exclude rule {rule} matches no scenario "
                                                       "of the plan; check its keys and values", err=True))
    _warn_split(groups, envs, lambda text: click.echo(text, err=True))
    n_sc = sum(len(g.planned["base"]) for g in groups)
    n_proc = 2 * sum(g.trials for g in groups)
    processes = f"{n_proc} process{'es' if n_proc != 1 else ''}"
    if max_trials > max(g.trials for g in groups):
        processes += f" (up to {2 * sum(max(max_trials, g.trials) for g in groups)} while verdicts are open)"
    if params["dry_run"]:
        for g in groups:
            for sc in g.planned["base"]:
                click.echo(sc.label())
        click.echo(f"{plural(n_sc, 'scenario')}, {processes} "
                   f"(base {sides['base'].python}, cand {sides['cand'].python})")
        return
    click.echo(f"A/B: base {sides['base'].python} (benchdb {sides['base'].version}), cand "
               f"{sides['cand'].python} (benchdb {sides['cand'].version}); {plural(n_sc, 'scenario')}, "
               f"{processes}", err=True)

    def progress(step, name, group, measured, done, total, seconds):
        state = ", ".join(m.outcome.status if m.outcome.status != "ok" else m.outcome.validity for m in measured)
        click.echo(f"[{done}/{total}] trial {step.trial + 1}/{max(group.trials, max_trials)} {name} "
                   f"{group.label()}: {state} ({seconds:.1f} s)", err=True)

    config = {"source": source, "runs": [o.config() for o in runs], "exclude": exclude, "shard": params["shard"],
              "skip_fresh": None}
    try:
        report = run_ab(groups, sides, config=config, out=runs[0].out, tags=runs[0].tags, progress=progress,
                        max_trials=max_trials, threshold=params["ab_threshold"], duet=duet)
    except KeyboardInterrupt:
        raise BenchdbError("interrupted: the A/B is incomplete; scenarios whose trials had all run are in their "
                           f"files under {runs[0].out}; run the command again for a complete gate",
                           exit_code=130) from None
    rows = {s: summary_rows(report.reports[s]) for s in SIDES}
    table = []
    for b, c in zip(rows["base"], rows["cand"], strict=True):
        ratio = c["median_ms"] / b["median_ms"] if b["median_ms"] and c["median_ms"] else None
        note = "; ".join(f"{s}: {r['note']}" for s, r in zip(SIDES, (b, c), strict=True) if r["note"])
        table.append([b["scenario"], b["status"], b["median_ms"], c["status"], c["median_ms"], ratio, note[:110]])
    click.echo(render(["scenario", "base", "base_median_ms", "cand", "cand_median_ms", "cand/base", "note"], table))
    for s in SIDES:
        r = report.reports[s]
        click.echo(f"{s} run {r.run_id} (tag {report.tags[s]}): {plural(len(r.files), 'file')} in {r.out_dir}")
    ok = sum(o.status == "ok" for s in SIDES for o in report.reports[s].outcomes)
    if ok == 0:
        raise BenchdbError("no scenario succeeded on either side; the files record each error (note column of "
                           "`benchdb run`): check both interpreters' environments", exit_code=3)
    click.echo(f"check with: {check_command(report, str(resolve_db(params['db'])))}")
