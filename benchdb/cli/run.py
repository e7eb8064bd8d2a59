"""Measuring: `benchdb run`, `suites`, `quickstart` and `hardware`.

Runners, backends and the warehouse are imported inside the commands, so `benchdb --help` stays
light (no torch, onnxruntime, openvino or duckdb).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import click

from benchdb import quantity
from benchdb.cli.help import INTERRUPTED, command
from benchdb.cli.shared_options import (
    READ_WAIT_S,
    THRESHOLD,
    THRESHOLD_HELP,
    Formats,
    Quantity,
    Renamed,
    csv_ints,
    csv_words,
    db_option,
    plural,
    progress_printer,
)
from benchdb.errors import BenchdbError

#: --skip-fresh: a duration checked now and kept as written (it is echoed and recorded as given).
AS_WRITTEN = Quantity(lambda v: (quantity.duration(v), str(v))[1], "DURATION")


@command("run", examples=(
    ("a matrix product at two batch sizes (numpy: no ML library needed)",
     "benchdb run --backend numpy --model matmul:256 --batch-size 1,8"),
    ("a tiny BERT (random weights, no download), eager and compiled",
     "benchdb run --backend pytorch --model tiny:bert --mode eager,compile"),
    ("A/B two environments' interpreters on the same scenarios (prints the check command)",
     "benchdb run --ab a/bin/python b/bin/python --backend numpy --model matmul:256")),
    exit_codes={0: "at least one scenario succeeded (failed, unsupported or timed-out ones are recorded in their "
                   "files, so `benchdb run ... && benchdb ingest ...` keeps working for partial failures)",
                3: "no scenario succeeded (every file records why)",
                130: "interrupted (Ctrl-C): the finished scenarios' files are kept, and the line printed says "
                     "how to resume"})
@click.option("--ab", nargs=2, default=None, metavar="BASE CAND",
              help="A/B gate: measure every scenario with two Python interpreters (e.g. the main branch's and "
                   "the PR's venv) in interleaved trials (--repeats, default 5); prints the check command.")
@click.option("--ab-url", "ab_url", nargs=2, default=None, metavar="BASE_URL CAND_URL",
              help="A/B of two serving deployments (--backend openai): measure every load point against both "
                   "endpoints in interleaved trials (--repeats, default 5), each with its hardware "
                   "(--ab-hardware-file); prints the check command.")
@click.option("--ab-hardware-file", "ab_hardware_file", nargs=2, default=None, metavar="BASE CAND",
              help="With --ab-url: each endpoint's hardware file (YAML/JSON system and how the server uses it).")
@click.option("--ab-env", "ab_env", multiple=True, metavar="SIDE:NAME=VALUE",
              help="Environment variable for one --ab side (repeatable): base:NAME=VALUE or cand:NAME=VALUE. "
                   "The run records its value hashed (it may be a token) unless --ab-env-public NAME.")
@click.option("--ab-env-public", "ab_env_public", multiple=True, metavar="NAME",
              help="Record this --ab-env variable's value as given in the run's config (repeatable).")
@click.option("--ab-max-trials", "ab_max_trials", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="N", help="With --ab: after the --repeats trials, give each scenario whose verdict is still "
                                "inconclusive two more trials at a time, up to N in all (0: exactly --repeats).")
@click.option("--ab-threshold", "ab_threshold", type=THRESHOLD, default="5%", show_default=True,
              help="With --ab-max-trials: the threshold of the `benchdb check` that follows." + THRESHOLD_HELP)
@click.option("--duet", is_flag=True,
              help="With --ab: run the two sides' processes at the same time on two disjoint, equivalent core "
                   "sets (or two GPUs), swapping sets between trials, so machine-wide noise hits both alike.")
@click.option("--parallel", default=None, metavar="auto|N",
              help="Measure N models at once on workers that share no core or device: whole physical cores "
                   "each (threads = its cores), or one GPU each. auto: one worker per NUMA node, or as many "
                   "--threads T workers as fit; one per GPU.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML or JSON file describing the runs; command-line options override it.")
@click.option("--suite", default=None, help="A predefined suite (see `benchdb suites`).")
@click.option("--dry-run", is_flag=True, help="Print the scenario plan and stop.")
@click.option("--shard", default=None, help="Run only slice i of n of the plan, e.g. 2/4.")
@click.option("--skip-fresh", default=None, type=AS_WRITTEN,
              help="Skip scenarios with a valid result on this hardware newer than this (30m, 12h, 7d); needs --db.")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="RUN_DIR", help="Finish an interrupted run: measure the scenarios of its plan that have no "
                                      "file in RUN_DIR (RESULTS_DIR/RUN_ID, or a RUN_ID under --out) yet, into the "
                                      "same run; no other plan options.")
@db_option(help="Warehouse for --skip-fresh and the --dry-run time estimate.")
@click.option("--bench", "benches", multiple=True, metavar="PATH",
              help="Your own bench_* functions (repeatable): a .py file, a folder of bench_*.py files, or "
                   "FILE::FUNCTION. Implies --backend userbench; replaces --model (docs: guides/user-benches.md).")
def run(**params):
    """Measure models on this machine (one file per scenario).

    Give --backend and --model (or --config FILE, --suite NAME or --bench PATH); --dry-run
    prints the plan. Options marked [backend] apply to that backend's runs only.
    """
    from benchdb.plan import config as cfgmod

    ctx = click.get_current_context()
    if params["resume_dir"] is not None:
        return _resume(ctx, params)
    runs, exclude, source = run_options(ctx, params)
    if params["parallel"] is not None and (params["parallel"] != "auto" and not params["parallel"].isdigit()
                                           or params["parallel"] == "0"):
        raise BenchdbError(f"--parallel {params['parallel']}: give auto or a number of workers (1 or more)")
    if params["ab"] and params["ab_url"]:
        raise BenchdbError("give --ab BASE CAND (two interpreters) or --ab-url BASE_URL CAND_URL (two endpoints), "
                           "not both")
    if params["ab_hardware_file"] and not params["ab_url"]:
        raise BenchdbError("--ab-hardware-file gives the hardware of the two --ab-url endpoints; give --ab-url too")
    if params["ab_url"] and params["duet"]:
        raise BenchdbError("--duet runs two interpreters' processes at once; --ab-url alternates two endpoints")
    if params["ab"] or params["ab_url"]:
        from benchdb.cli import ab

        if params["parallel"]:
            raise BenchdbError("--parallel runs one side's scenarios at once; for --ab use --duet (both sides "
                               "at once on mirrored cores)")
        return ab.cli(ctx, params, runs, exclude, source)
    if params["duet"]:
        raise BenchdbError("--duet runs the two sides of --ab BASE CAND at the same time; give --ab too")
    workers = None
    if params["parallel"]:
        workers, runs = _workers(runs, params["parallel"], "--parallel")
    if params["ab_env"] or params.get("ab_env_public"):
        raise BenchdbError("--ab-env sets a variable for one side of --ab BASE CAND; give --ab too")
    if params["ab_max_trials"]:
        raise BenchdbError("--ab-max-trials extends the trials of --ab BASE CAND; give --ab too")
    shard = cfgmod.parse_shard(params["shard"]) if params["shard"] else None
    if not params["dry_run"]:
        from benchdb.plan.driver import prestart

        prestart(runs)
    return _plan_and_run(params, runs, exclude, source, shard, workers)


def _workers(runs, n: str, flag: str):
    """The workers of --parallel N (``flag`` names it in errors), said on stderr, and the runs with
    each worker's thread count where none was given (:func:`benchdb.plan.parallel.workers_for`)."""
    from benchdb.plan import parallel

    if any(not o.isolate for o in runs):
        raise BenchdbError("--parallel measures in separate processes; drop --no-isolation")
    workers, runs = parallel.workers_for(runs, n, flag)
    click.echo(f"parallel: {plural(len(workers), 'worker')}: " + "; ".join(w.label() for w in workers), err=True)
    return workers, runs


def _plan_and_run(params, runs, exclude, source, shard, workers=None):
    from benchdb.backends.core_options import recorded_config
    from benchdb.plan.planning import build_plan

    items = build_plan(runs, exclude=exclude, shard=shard,
                       unmatched=lambda rule: click.echo(f"warning: exclude rule {rule} matches no scenario "
                                                         "of the plan; check its keys and values", err=True))
    if params["skip_fresh"]:
        skipped = _skip_fresh(items, params["skip_fresh"], params["db"])
        items = [i for i in items if i.scenarios]
        click.echo(f"skipped {skipped} scenario(s) with a valid result newer than {params['skip_fresh']}", err=True)
    if params["dry_run"]:
        _print_plan(items, params["db"])
        return
    if not items:
        click.echo("0 scenarios to run")
        return

    config = {"source": source, "runs": [recorded_config(o) for o in runs], "exclude": exclude,
              "shard": params["shard"], "skip_fresh": params["skip_fresh"]}
    if workers:
        config["parallel"] = [w.record() for w in workers]
    _measure(items, config, runs[0].out, runs[0].tags, params["db"], workers=workers)


def _measure(items, config, out, tags, db, resume=None, workers=None) -> None:
    """Run the plan, print what each scenario gave, and say how to resume after Ctrl-C."""
    from benchdb.plan.driver import Interrupted, run_plan, summary_rows
    from benchdb.reports.tabular import run_summary

    try:
        report = run_plan(items, config=config, out=out, tags=tags, progress=progress_printer(), resume=resume,
                          workers=workers)
    except Interrupted as stop:
        raise BenchdbError(f"{stop}; resume with: {_resume_command(stop.report.out_dir, db)}",
                           exit_code=130) from None
    click.echo(run_summary(summary_rows(report)))
    click.echo(f"run {report.run_id}: {plural(len(report.files), 'file')} in {report.out_dir}")
    ok = sum(o.status == "ok" for o in report.outcomes)
    if ok == 0:
        from collections import Counter

        why = ", ".join(f"{n} {status}" for status, n in Counter(o.status for o in report.outcomes).most_common())
        raise BenchdbError(f"no scenario succeeded ({why}); the files record each error: ingest them to keep "
                           "the record, and see the note column above", exit_code=3)


def _resume_command(out_dir, db) -> str:
    """The commands that finish an interrupted run (exactly its missing scenarios), then ingest it."""
    import shlex

    from benchdb.warehouse import resolve_db

    folder = shlex.quote(str(out_dir))
    if "://" in str(out_dir):          # a remote --out records no plan: ingest what was kept
        return f"benchdb ingest {folder} --db {shlex.quote(str(resolve_db(db)))}"
    return f"benchdb run --resume {folder} && benchdb ingest {folder} --db {shlex.quote(str(resolve_db(db)))}"


def _resume(ctx, params) -> None:
    from click.core import ParameterSource

    from benchdb.plan.driver import prestart
    from benchdb.plan.resume import resume_plan

    plan_options = {"backend", "models", "benches", "config_file", "suite", "ab", "ab_url", "ab_hardware_file",
                    "ab_env", "ab_env_public", "ab_max_trials", "shard", "skip_fresh", "dry_run", "repeats",
                    "parallel", "duet"}
    given = sorted(k for k in plan_options if ctx.get_parameter_source(k) == ParameterSource.COMMANDLINE)
    if given:
        raise BenchdbError(f"--resume finishes the plan the interrupted run recorded; leave out "
                           f"{', '.join('--' + k.replace('_', '-') for k in given)}")
    folder = params["resume_dir"]
    if not folder.is_dir() and len(folder.parts) == 1 and (Path(params["out"]) / folder).is_dir():
        folder = Path(params["out"]) / folder          # a run id: the run's folder under --out
    resume = resume_plan(folder)
    left = sum(len(i.scenarios) for i in resume.items)
    if not left:
        click.echo(f"nothing left to measure: all {plural(resume.planned, 'planned scenario')} of run "
                   f"{resume.run_id} have their files in {resume.folder}")
        return
    click.echo(f"resuming run {resume.run_id}: {left} of {plural(resume.planned, 'planned scenario')} left "
               f"({resume.done} measured before)", err=True)
    runs = [i.opts for i in resume.items]
    workers = None
    co_runners = max((o.co_runners or 0 for o in runs), default=0)
    if co_runners:          # a --parallel run goes on in parallel: its scenarios' identity says so
        workers, _ = _workers(runs, str(co_runners + 1), f"--resume of a --parallel {co_runners + 1} run")
    prestart(runs)
    _measure(resume.items, resume.config, resume.folder.parent, resume.tags, params["db"], resume, workers=workers)


def _click_option(opt, owners: list[str]) -> click.Option:
    """The `benchdb run` option of a declared run option (benchdb.backends.core_options)."""
    from functools import partial

    from benchdb.backends import core_options as options

    text = (f"[{', '.join(owners)}] " if owners else "") + opt.help
    names = [opt.cli_flag, *opt.old_flags, opt.param]       # old flags: read, not shown
    kw: dict = {"help": text, "metavar": opt.metavar}
    shown = options.default_text(opt)      # a default that differs per backend, in words
    if shown:                               # as click writes a default, without its parentheses
        kw["help"] = f"{text}  [default: {shown}]"
    if opt.kind == "bool":
        return Renamed(names, is_flag=True, **kw)
    if opt.repeat:
        kw["metavar"] = opt.metavar or opt.cli_flag[2:].upper().replace("-", "_")
        return Renamed(names, multiple=True, **kw)
    if opt.kind in ("words", "ints"):
        default = ",".join(map(str, opt.default)) if opt.default else None
        kw["metavar"] = (opt.metavar or opt.cli_flag[2:].upper().replace("-", "_")) + ",..."
        return Renamed(names, default=default,
                            show_default=not shown and default is not None,
                            callback=csv_ints if opt.kind == "ints" else csv_words, **kw)
    if opt.kind in options.QUANTITIES:
        kw["help"] = f"{text} Write {options.QUANTITIES[opt.kind]}."
        kw["metavar"] = opt.metavar or ("DURATION" if opt.kind == "duration" else "PCT")
        return Renamed(names, type=Quantity(partial(options.quantity_of, opt), kw["metavar"]),
                            default=None if opt.default is None else options.quantity_text(opt, opt.default),
                            show_default=not shown and opt.default is not None, **kw)
    kind = {"int": click.IntRange(min=opt.minimum, max=opt.maximum),
            "float": click.FloatRange(min=opt.minimum, max=opt.maximum)}.get(opt.kind, click.STRING)
    if opt.kind in ("int", "float") and opt.minimum is None and opt.maximum is None:
        kind = click.INT if opt.kind == "int" else click.FLOAT
    return Renamed(names, type=kind, default=opt.default,
                        show_default=not shown and opt.default is not None, **kw)


def with_run_options(command: click.Command, *, leave_out: Collection[str] = (),
                     backends_left_out: Collection[str] = (),
                     changed: Mapping[str, Mapping[str, Any]] | None = None) -> click.Command:
    """Adds the declared run options, core and backends' own, before the command's other options:
    every one (`benchdb run`), or, for a command that measures otherwise (`bisect`), all but the
    options named in ``leave_out`` and those only ``backends_left_out`` take, with the fields in
    ``changed`` (by option name: its default, its help) its own."""
    from dataclasses import replace

    from benchdb.backends import core_options as options

    changed = changed or {}
    command.params[:0] = [
        _click_option(replace(opt, **changed.get(opt.name, {})), owners) for opt, owners in options.every()
        if opt.name not in leave_out and not (owners and set(owners) <= set(backends_left_out))]
    return command


def run_options(ctx, params):
    """RunOptions from --config/--suite with command-line overrides, or from the command line."""
    from click.core import ParameterSource

    from benchdb.backends import core_options as options
    from benchdb.harness.scenario import RunOptions
    from benchdb.plan import config as cfgmod

    declared = {opt.param: opt for opt, _ in options.every()}
    explicit = {k for k in params if ctx.get_parameter_source(k) == ParameterSource.COMMANDLINE}
    if params["benches"]:
        if params["config_file"] or params["suite"]:
            raise BenchdbError("give --bench or --config/--suite, not both; a config file names benches as "
                               "models of backend userbench")
        if params["backend"] not in (None, "userbench"):
            raise BenchdbError(f"--bench runs backend userbench; leave out --backend {params['backend']}")
        params = {**params, "backend": "userbench", "models": tuple(params["models"]) + tuple(params["benches"])}
    if params["config_file"] and params["suite"]:
        raise BenchdbError("give --config or --suite, not both")
    if params["config_file"] or params["suite"]:
        cfg = (cfgmod.load(params["config_file"]) if params["config_file"] else cfgmod.load_suite(params["suite"]))
        runs, exclude, source = cfg.runs, cfg.exclude, cfg.source
    else:
        if not params["backend"] or not params["models"]:
            raise BenchdbError("give --backend and --model, or --config FILE / --suite NAME "
                               "(see `benchdb suites`)")
        runs = [RunOptions(backend=params["backend"], models=tuple(params["models"]))]
        exclude, source = [], "command line"
        core = {o.param for o in options.CORE if o.name not in ("backend", "models")}
        explicit |= core
    given = {}
    for param in explicit & set(declared) & set(params):      # a command may take only some (bisect)
        opt = declared[param]
        value = params[param]
        given[opt.name] = (not value) if opt.negate else (tuple(value) if isinstance(value, (list, tuple)) else value)
    return [options.apply(opts, given, "command line", strict=len(runs) == 1) for opts in runs], exclude, source


def _skip_fresh(items, duration: str, db) -> int:
    from datetime import datetime, timedelta, timezone

    from benchdb.plan.planning import skip_series
    from benchdb.warehouse import Warehouse

    if not db:
        raise BenchdbError("--skip-fresh needs --db FILE (the warehouse that holds earlier results)")
    since = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(seconds=quantity.duration(duration))
    return skip_series(items, Warehouse(db, wait_s=READ_WAIT_S).fresh_series(since))


def _print_plan(items, db) -> None:
    from benchdb.plan.planning import estimate_seconds
    from benchdb.warehouse import Warehouse

    for item in items:
        for sc in item.scenarios:
            click.echo(sc.label())
    total = sum(len(i.scenarios) for i in items)
    if db:
        seconds, known = estimate_seconds(items, Warehouse(db, wait_s=READ_WAIT_S).measured_seconds())
        click.echo(f"{plural(total, 'scenario')}, about {seconds / 60:.1f} min ({known} estimated from history)")
    else:
        click.echo(plural(total, "scenario"))


@command("suites", examples=(("list them", "benchdb suites"),
                             ("the scenarios of one, without measuring", "benchdb run --suite smoke --dry-run")))
def suites():
    """The predefined suites (for `benchdb run --suite NAME`)."""
    from benchdb.plan import config as cfgmod

    for name in cfgmod.suite_names():
        cfg = cfgmod.load_suite(name)
        backends = ", ".join(dict.fromkeys(o.backend for o in cfg.runs))
        click.echo(f"{name:<16} {cfg.description} [{backends}]")


@command("quickstart", examples=(
    ("measure, ingest and report (about a minute on 2 cores)", "benchdb quickstart"),
    ("one process per model: faster, but no winner can be confirmed",
     "benchdb quickstart --repeats 1 --report quick.html")),
    exit_codes=INTERRUPTED)
@db_option()
@click.option("--out", default="results", show_default=True, help="Folder for the measurement files.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("report.html"), show_default=True, help="Where to write the HTML report.")
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True,
              help="Processes per scenario, interleaved (each with 1/K of the suite's time); 1: one process "
                   "per model, and no winner can be confirmed.")
def quickstart(db, out, report_path, repeats):
    """Measure, ingest and report the smoke suite on this machine.

    Every installed backend runs the smoke suite; the results are ingested into the warehouse and
    an HTML report is written."""
    from benchdb.plan import quickstart as qs
    from benchdb.warehouse import Warehouse

    path = Warehouse(db).path
    result = qs.run(str(path), out, report_path, progress=progress_printer(),
                    note=lambda text: click.echo(text, err=True), repeats=repeats)
    click.echo(result.optimal_markdown)
    click.echo(result.ingest_line)
    click.echo(f"report: {result.report_path.resolve()} (open it in a browser)")
    click.echo(next_steps(path))


def next_steps(path) -> str:
    """quickstart's last lines: the warehouse, and two commands that read it, runnable as printed."""
    import shlex

    db = shlex.quote(str(path))
    query = shlex.quote("SELECT model_id, backend, batch_size, median FROM results")
    return f"warehouse: {path}; next:\n  benchdb report --matrix --db {db}\n  benchdb query {query} --db {db}"


@command("hardware", examples=(
    ("what this machine has", "benchdb hardware"),
    ("the same for scripts", "benchdb hardware --format json"),
    ("this machine as a hardware file (--hardware-file of run --url and import)", "benchdb hardware --format yaml")))
@click.option("--format", "fmt", type=Formats(["table", "json", "yaml"], old={"text": "table"}), default="table",
              show_default=True, help="json: machine-readable; yaml: this machine as a system, in the form of a "
                                      "hardware file (--hardware-file of run --url and import).")
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json (kept for scripts).")
def hardware_cmd(fmt, as_json):
    """This machine's CPU, memory, devices and backends.

    With the installed backends' and libraries' versions, and how --parallel would split it."""
    from benchdb.plan import machine

    if fmt == "yaml" and not as_json:
        click.echo(machine.as_hardware_file())
        return
    rep = machine.report()
    if as_json or fmt == "json":
        click.echo(json.dumps(rep, indent=1, default=str))
        return
    cpu = rep["cpu"]
    click.echo(f"host      {rep['host']} (Python {rep['python']}, {cpu['os']}, {cpu['arch']})")
    click.echo(f"cpu       {cpu['cpu_model']} ({cpu['cores_physical']} physical / "
               f"{cpu['cores_logical']} logical cores; {', '.join(cpu['flags']) or 'no'} extensions)")
    click.echo(f"memory    {cpu['memory_bytes'] / 2**30:.1f} GiB")
    t = rep["topology"]
    nodes = "; ".join(f"node {n}: cpus {c}" for n, c in t["numa_nodes"].items()) or "no NUMA information"
    click.echo(f"topology  cpus {t['cpus']} ({t['physical_cores']} physical cores); {nodes}")
    click.echo(f"parallel  auto: {len(t['parallel_auto'])} worker(s) on cores "
               f"{', '.join(s['cpus'] for s in t['parallel_auto'])}; --threads T: as many T-core workers as fit "
               f"(--parallel {t['physical_cores']} --threads 1 at most here)")
    if rep["accelerators"]:
        for acc in rep["accelerators"]:
            mem = f", {acc['memory_bytes'] / 2**30:.0f} GiB" if acc["memory_bytes"] else ""
            click.echo(f"device    {acc['device']}: {acc['name']} ({acc['kind']}{mem})")
    else:
        click.echo("device    cpu only (no CUDA, ROCm, MPS or XPU device visible to PyTorch)")
    tel = rep["nvidia_telemetry"]
    click.echo(f"nvidia    telemetry {tel['status']}: {tel['detail']}")
    click.echo(f"energy    cpu {rep['cpu_energy']['status']}: {rep['cpu_energy']['detail']}")
    if rep["load_avg_1m"] is not None:
        click.echo(f"load      {rep['load_avg_1m']:.2f} (1-min average)")
    for title, items in (("backends", rep["backends"]), ("libraries", rep["libraries"])):
        click.echo(f"{title}:")
        for b in items:
            if b["status"] != "available":
                detail = f"unavailable - {b['hint']}"
            elif "uses" in b:       # named: openai's version is httpx's, ort-web's is onnxruntime-web's
                detail = ", ".join(f"{name} {version or '(not installed)'}" for name, version in b["uses"].items())
            else:
                detail = b["version"]
            click.echo(f"  {b['name']:<16} {detail}")


COMMANDS = (with_run_options(run), suites, quickstart, hardware_cmd)
