"""The `benchdb` command line. Thin: parse options, call library functions, print.

Imports of runners, ingest and backends happen inside commands, so `benchdb --help` stays light
(no torch, onnxruntime or openvino).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from benchdb import __version__
from benchdb.errors import BenchdbError

_DB_HELP = "DuckDB warehouse file (default: $BENCHDB_DB, else ./benchdb.duckdb)."


def _csv_ints(ctx, param, value):
    if value is None:
        return None
    try:
        out = tuple(int(v) for v in str(value).split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers, e.g. 1,4,8") from None
    if not out or any(v < 1 for v in out):
        raise click.BadParameter(f"{value!r}: give positive integers, e.g. 1,4,8")
    return out


def _csv_words(ctx, param, value):
    if value is None:
        return None
    out = tuple(v.strip() for v in str(value).split(",") if v.strip())
    if not out:
        raise click.BadParameter("give at least one value")
    return out


class _Group(click.Group):
    """Turns BenchdbError (and a DuckDB error while querying) into one line and an exit code."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BenchdbError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"benchdb: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, SystemExit):
            raise
        except Exception as exc:  # a bug, not the user's fault: still one line unless --debug
            if ctx.obj and ctx.obj.get("debug"):
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            click.echo(f"benchdb: internal error: {type(exc).__name__}: {first} "
                       "(run with --debug for the traceback and please report it)", err=True)
            ctx.exit(70)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="benchdb")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx, debug):
    """benchdb: a benchmark data warehouse for ML inference across hardware.

    Runners write raw Parquet measurements (`benchdb run`), `benchdb ingest` loads them into a
    versioned DuckDB file, and `benchdb query` / reports read it.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


# --------------------------------------------------------------------------- run
def _progress_printer():
    """A progress bar over scenarios on a terminal; one line per scenario in logs and pipes."""
    tty = sys.stderr.isatty()

    def progress(outcome, done, total):
        state = outcome.status if outcome.status != "ok" else outcome.validity
        if tty:
            width = 30
            filled = width * done // total
            line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {outcome.scenario.label()}: {state}"
            click.echo("\r\033[K" + line[:200], err=True, nl=done == total)
        else:
            click.echo(f"[{done}/{total}] {outcome.scenario.label()}: {state}", err=True)

    return progress


@main.command()
@click.option("--backend", default=None, help="numpy, pytorch, onnxruntime or openvino.")
@click.option("--device", default="cpu", show_default=True, help="Device to measure on.")
@click.option("--model", "models", multiple=True,
              help="Model spec (repeatable): matmul:<N> for numpy; a local folder, a cached Hub id, "
                   "tiny:<model_type> or list:<key|small|tiny> for ML backends.")
@click.option("--batch-sizes", callback=_csv_ints, default="1", show_default=True, help="Comma-separated.")
@click.option("--seq-lens", callback=_csv_ints, default="128", show_default=True,
              help="Sequence lengths (backends with text inputs).")
@click.option("--mode", "modes", callback=_csv_words, default="eager", show_default=True,
              help="pytorch: eager, compile[:mode]; onnxruntime: opt-all (default), opt-extended, opt-basic, "
                   "opt-disabled; openvino: latency (default), throughput.")
@click.option("--precision", "precisions", callback=_csv_words, default="fp32", show_default=True,
              help="Comma-separated: fp32, fp16, bf16, fp64.")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Fixed thread count (default: physical cores). Recorded with every result.")
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True, help="Warm-up calls.")
@click.option("--min-iters", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--min-time", type=click.FloatRange(min=0), default=1.0, show_default=True, help="Seconds.")
@click.option("--max-time", type=click.FloatRange(min=0), default=20.0, show_default=True, help="Seconds.")
@click.option("--target-ci", type=click.FloatRange(min=0.0001, max=0.99), default=0.02, show_default=True,
              help="Stop once the 95%% CI of the median is within +- this fraction.")
@click.option("--max-background-cpu", type=click.FloatRange(min=0, max=100), default=30.0, show_default=True,
              help="Other processes' CPU %% above which a result is marked invalid.")
@click.option("--task", default=None, help="Override the detected task (feature-extraction, text-generation).")
@click.option("--gen-tokens", type=click.IntRange(min=1), default=16, show_default=True,
              help="Tokens each generate call must produce (generative models).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), default=900.0, show_default=True,
              help="Seconds one scenario may take before it is recorded as timeout.")
@click.option("--load-timeout", "load_timeout_s", type=click.FloatRange(min=0.1), default=900.0,
              show_default=True, help="Seconds a model may take to load in its child process.")
@click.option("--verify-only", is_flag=True,
              help="onnxruntime/openvino: check outputs against PyTorch fp32 without timing.")
@click.option("--ep", "providers", callback=_csv_words, default="CPU", show_default=True,
              help="onnxruntime execution providers in priority order: CPU, CUDA, TensorRT, OpenVINO, ...")
@click.option("--no-isolation", is_flag=True,
              help="Measure in this process (debugging): no child process, no timeouts.")
@click.option("--tag", "tags", multiple=True, help="Tag recorded on the run (repeatable).")
@click.option("--out", default="results", show_default=True,
              help="Folder for the Parquet measurement files, or an fsspec URL (s3://, gs://, hf://...).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML or JSON file describing the runs; command-line options override it.")
@click.option("--suite", default=None, help="A predefined suite (see `benchdb suites`).")
@click.option("--dry-run", is_flag=True, help="Print the scenario plan and stop.")
@click.option("--shard", default=None, help="Run only slice i of n of the plan, e.g. 2/4.")
@click.option("--skip-fresh", default=None, help="Skip scenarios with a valid result on this hardware newer "
              "than this (30m, 12h, 7d); needs --db.")
@click.option("--db", default=None, help="Warehouse for --skip-fresh and the --dry-run time estimate.")
def run(**params):
    """Measure models on this machine and write one Parquet file per scenario."""
    from benchdb.reports.tabular import render
    from benchdb.plan import config as cfgmod
    from benchdb.plan.driver import build_plan, run_plan, summary_rows

    ctx = click.get_current_context()
    runs, exclude, source = _run_options(ctx, params)
    shard = cfgmod.parse_shard(params["shard"]) if params["shard"] else None
    items = build_plan(runs, exclude=exclude, shard=shard)
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
    config = {"source": source, "runs": [o.config() for o in runs], "exclude": exclude,
              "shard": params["shard"], "skip_fresh": params["skip_fresh"]}
    report = run_plan(items, config=config, out=runs[0].out, tags=runs[0].tags, progress=_progress_printer())
    rows = summary_rows(report)
    cols = ["scenario", "status", "median_ms", "p90_ms", "items_per_s", "n", "note"]
    click.echo(render(cols, [[r[c] for c in cols] for r in rows]))
    click.echo(f"run {report.run_id}: {len(report.files)} file(s) in {report.out_dir}")


#: command-line option -> RunOptions field (or "rule.<StopRule field>")
_RUN_FIELDS = {"backend": "backend", "device": "device", "models": "models", "batch_sizes": "batch_sizes",
               "seq_lens": "seq_lens", "modes": "modes", "precisions": "precisions", "threads": "threads",
               "warmup": "rule.warmup_iters", "min_iters": "rule.min_iters", "min_time": "rule.min_time_s",
               "max_time": "rule.max_time_s", "target_ci": "rule.target_ci",
               "max_background_cpu": "max_background_cpu", "task": "task", "gen_tokens": "gen_tokens",
               "timeout_s": "timeout_s", "load_timeout_s": "load_timeout_s", "verify_only": "verify_only",
               "providers": "providers", "tags": "tags", "out": "out"}


def _run_options(ctx, params):
    """RunOptions from --config/--suite with command-line overrides, or from the command line."""
    from dataclasses import replace

    from click.core import ParameterSource

    from benchdb.plan import config as cfgmod
    from benchdb.backends.base import RunOptions

    explicit = {k for k in params if ctx.get_parameter_source(k) == ParameterSource.COMMANDLINE}
    values = {k: (tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in params.items()}
    if params["config_file"] and params["suite"]:
        raise BenchdbError("give --config or --suite, not both")
    if params["config_file"] or params["suite"]:
        cfg = (cfgmod.load(params["config_file"]) if params["config_file"] else cfgmod.load_suite(params["suite"]))
        runs, exclude, source = cfg.runs, cfg.exclude, cfg.source
    else:
        if not params["backend"] or not params["models"]:
            raise BenchdbError("give --backend and --model, or --config FILE / --suite NAME "
                               "(see `benchdb suites`)")
        runs, exclude, source = [RunOptions(backend=params["backend"], models=tuple(params["models"]))], [], "command line"
        explicit |= {k for k in _RUN_FIELDS if k not in ("backend", "models")}
    out = []
    for opts in runs:
        rule_changes, changes = {}, {}
        for k in explicit & set(_RUN_FIELDS):
            target = _RUN_FIELDS[k]
            if target.startswith("rule."):
                rule_changes[target[5:]] = values[k]
            else:
                changes[target] = values[k]
        if "no_isolation" in explicit:
            changes["isolate"] = not params["no_isolation"]
        try:
            rule = replace(opts.rule, **rule_changes)
        except ValueError as exc:
            raise BenchdbError(f"stopping rule: {exc}") from None
        out.append(replace(opts, rule=rule, **changes))
    return out, exclude, source


def _skip_fresh(items, duration: str, db) -> int:
    from datetime import datetime, timedelta, timezone

    from benchdb import sql as sqlmod
    from benchdb.plan.config import parse_duration
    from benchdb.plan.driver import hardware_ids
    from benchdb.schema import database

    if not db:
        raise BenchdbError("--skip-fresh needs --db FILE (the warehouse that holds earlier results)")
    since = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(seconds=parse_duration(duration))
    con, _ = database.open_readonly(db)
    try:
        fresh = set(con.execute(sqlmod.load("queries/fresh_results.sql"), {"since": since}).fetchall())
    finally:
        con.close()
    hw = hardware_ids(items)
    skipped = 0
    for item in items:
        keep = []
        for sc in item.scenarios:
            key = (sc.model_id, sc.backend, sc.device, sc.mode, sc.precision, sc.batch_size, sc.input_shape,
                   hw[(item.opts.backend, item.opts.device)])
            if key in fresh:
                skipped += 1
            else:
                keep.append(sc)
        item.scenarios = keep
    return skipped


def _print_plan(items, db) -> None:
    from benchdb import sql as sqlmod
    from benchdb.schema import database

    history: dict = {}
    if db:
        con, _ = database.open_readonly(db)
        try:
            history = {tuple(r[:7]): r[7] for r in con.execute(sqlmod.load("queries/estimate_history.sql")).fetchall()}
        finally:
            con.close()
    total, seconds, known = 0, 0.0, 0
    for item in items:
        for sc in item.scenarios:
            click.echo(sc.label())
            total += 1
            est = history.get((sc.model_id, sc.backend, sc.device, sc.mode, sc.precision, sc.batch_size,
                               sc.input_shape))
            if est is not None:
                known += 1
                seconds += est + 1.0
            else:
                seconds += item.opts.rule.min_time_s + 1.0
    if db:
        click.echo(f"{total} scenarios, about {seconds / 60:.1f} min ({known} estimated from history)")
    else:
        click.echo(f"{total} scenarios")


@main.command()
def suites():
    """The predefined suites (for `benchdb run --suite NAME`)."""
    from benchdb.plan import config as cfgmod

    for name in cfgmod.suite_names():
        cfg = cfgmod.load_suite(name)
        backends = ", ".join(dict.fromkeys(o.backend for o in cfg.runs))
        click.echo(f"{name:<16} {cfg.description} [{backends}]")


# --------------------------------------------------------------------------- ingest
@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--db", default=None, help=_DB_HELP)
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds to wait for another process that holds the database.")
@click.option("--batch-rows", type=click.IntRange(min=1), default=None, hidden=True,
              help="Sample rows per load transaction (tuning and tests).")
def ingest(paths, db, wait_s, batch_rows):
    """Load Parquet measurement files (folders, files or fsspec URLs, recursively) into the warehouse."""
    from benchdb.ingest import DEFAULT_BATCH_ROWS, ingest as do_ingest

    def progress(done, total):
        click.echo(f"  loaded {done}/{total} file(s)", err=True)

    summary = do_ingest(paths, db, wait_s=wait_s, progress=progress,
                        batch_rows=batch_rows or DEFAULT_BATCH_ROWS)
    for path, reason in summary.rejected:
        click.echo(f"rejected {path}: {reason}", err=True)
    click.echo(summary.line())
    if summary.run_ids:
        from benchdb.analysis import changepoints
        from benchdb.schema import database

        con, _ = database.open_writable(summary.db, wait_s=wait_s)
        try:
            found = changepoints.update(con, sorted(summary.run_ids))
        finally:
            con.close()
        if found:
            click.echo(f"{found} open change point(s) in the history of the series loaded; "
                       "see `benchdb report --regressions`")
    if summary.rejected:
        sys.exit(1)


# --------------------------------------------------------------------------- db
@main.group()
def db():
    """Inspect or migrate the warehouse schema."""


@db.command("status")
@click.option("--db", "db_path", default=None, help=_DB_HELP)
def db_status(db_path):
    """Schema version of the database against this benchdb's, and table sizes."""
    from benchdb.schema import database

    st = database.status(db_path)
    if not st["exists"]:
        click.echo(f"{st['path']}: does not exist (benchdb schema version {st['code_version']}); "
                   "`benchdb ingest` creates it")
        return
    state = ("up to date" if st["pending"] == 0 and st["schema_version"] <= st["code_version"]
             else f"{st['pending']} migration(s) pending: run `benchdb db upgrade`"
             if st["schema_version"] < st["code_version"] else "newer than this benchdb: upgrade benchdb")
    click.echo(f"{st['path']}: schema version {st['schema_version']}, benchdb supports "
               f"{st['code_version']} ({state})")
    for name, n in st["tables"].items():
        click.echo(f"  {name:<16} {n:>12,} rows")


@db.command("upgrade")
@click.option("--db", "db_path", default=None, help=_DB_HELP)
def db_upgrade(db_path):
    """Apply pending migrations in place (each in its own transaction)."""
    from benchdb.schema import database

    path = database.resolve_db(db_path)
    con = database._connect(path, read_only=False, wait_s=60.0)
    try:
        applied = database.upgrade(con, path)
        version = database.schema_version(con)
    finally:
        con.close()
    if applied:
        click.echo(f"{path}: applied {', '.join(f'{m.version:04d}_{m.name}' for m in applied)}; "
                   f"schema version {version}")
    else:
        click.echo(f"{path}: already at schema version {version}")


# --------------------------------------------------------------------------- query
@main.command()
@click.argument("sql_text", metavar="SQL")
@click.option("--db", default=None, help=_DB_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def query(sql_text, db, fmt):
    """Run a read-only SQL query against the warehouse."""
    import duckdb

    from benchdb.reports.tabular import render
    from benchdb.schema import database
    from benchdb.sql.readonly import check_read_only

    check_read_only(sql_text)
    con, path = database.open_readonly(db)
    try:
        try:
            cur = con.execute(sql_text)
        except duckdb.Error as exc:
            text = str(exc).splitlines()[0]
            if "read-only" in text.lower():
                raise BenchdbError(f"benchdb query is read-only: {text}") from None
            raise BenchdbError(f"query failed: {text}") from None
        if cur.description is None:
            return
        cols = [d[0] for d in cur.description]
        rows = cur.fetchall()
    finally:
        con.close()
    click.echo(render(cols, rows, fmt))


# --------------------------------------------------------------------------- report
@main.command()
@click.option("--optimal-hardware", "kinds", flag_value="optimal-hardware", multiple=True,
              help="Best hardware/backend per model and batch size (and the runner-up).")
@click.option("--matrix", "kinds", flag_value="matrix", multiple=True, help="Compatibility matrix.")
@click.option("--speedup", "kinds", flag_value="speedup", multiple=True, help="Speedup vs CPU PyTorch eager.")
@click.option("--scaling", "kinds", flag_value="scaling", multiple=True, help="Batch scaling.")
@click.option("--memory", "kinds", flag_value="memory", multiple=True, help="Peak memory.")
@click.option("--trends", "kinds", flag_value="trends", multiple=True, help="Medians over runs.")
@click.option("--regressions", "kinds", flag_value="regressions", multiple=True,
              help="Open change points in the series' history.")
@click.option("--all", "all_", is_flag=True, help="Every report above.")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json", "csv"]), default=None,
              help="Default: html when --out ends in .html, else md.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file (atomically) instead of standard output.")
@click.option("--db", default=None, help=_DB_HELP)
@click.option("--model", "models", multiple=True, help="Only these models (repeatable).")
@click.option("--hardware", "hardware_names", multiple=True, help="Only this hardware, by name or id (repeatable).")
@click.option("--objective", type=click.Choice(["throughput", "latency", "energy", "cost"]), default="throughput",
              show_default=True, help="What --optimal-hardware optimises.")
@click.option("--max-latency-ms", type=click.FloatRange(min=0), default=None, help="Latency budget (median).")
@click.option("--max-memory-mb", type=click.FloatRange(min=0), default=None, help="Peak memory budget.")
@click.option("--prices", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="YAML: hardware name -> USD per hour (for --objective cost).")
@click.option("--github-summary", is_flag=True, help="Also append the Markdown to $GITHUB_STEP_SUMMARY.")
def report(kinds, all_, fmt, out, db, models, hardware_names, objective, max_latency_ms, max_memory_mb, prices,
           github_summary):
    """Reports from the warehouse: optimal hardware, compatibility, speedup, scaling, memory, trends."""
    from benchdb.reports import build as builder, render as renderer
    from benchdb.schema import database

    chosen = list(builder.ALL) if all_ else list(dict.fromkeys(kinds))
    if not chosen:
        raise BenchdbError("choose a report: --optimal-hardware, --matrix, --speedup, --scaling, --memory, "
                           "--trends, --regressions or --all")
    fmt = fmt or ("html" if out is not None and out.suffix.lower() in (".html", ".htm") else "md")
    filters = builder.Filters(models=tuple(models), hardware=tuple(hardware_names), objective=objective,
                              max_latency_ms=max_latency_ms, max_memory_mb=max_memory_mb,
                              prices=_load_prices(prices) if prices else {})
    con, path = database.open_readonly(db)
    try:
        rep = builder.build(con, str(path), chosen, filters)
    finally:
        con.close()
    text = renderer.render(rep, fmt)
    if github_summary:
        _append_summary(renderer.markdown(rep) if fmt != "md" else text)
    if out is None:
        click.echo(text, nl=False)
    else:
        _write_atomic(out, text)
        click.echo(f"wrote {out} ({fmt}, {sum(len(s.rows) for s in rep.sections)} rows)", err=True)


def _load_prices(path: Path) -> dict[str, float]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise BenchdbError(f"prices file {path} is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             for v in data.values()):
        raise BenchdbError(f"prices file {path} must map hardware names to USD per hour, "
                           "e.g. 'NVIDIA H100 80GB HBM3: 4.5'")
    return {str(k): float(v) for k, v in data.items()}


def _write_atomic(path: Path, text: str) -> None:
    import os

    if path.parent and not path.parent.exists():
        raise BenchdbError(f"folder {path.parent} does not exist; create it or choose another --out")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# --------------------------------------------------------------------------- check / ack
def _fraction(ctx, param, value):
    text = str(value).strip()
    try:
        v = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a threshold like 5% or 0.05") from None
    if not 0 <= v < 10:
        raise click.BadParameter(f"{value!r} is out of range")
    return v


@main.command()
@click.option("--baseline", required=True, help="Runs to compare against: latest~1, run:ID, commit:SHA, tag:T, time:A..B")
@click.option("--candidate", required=True, help="Runs under test (same selector forms), e.g. latest.")
@click.option("--threshold", default="5%", callback=_fraction, show_default=True,
              help="Smallest change that matters (the series' own noise x3 raises it).")
@click.option("--metric", default="latency_s", show_default=True, help="Metric to compare (raw samples).")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--github-summary", is_flag=True, help="Also append the Markdown to $GITHUB_STEP_SUMMARY.")
@click.option("--db", default=None, help=_DB_HELP)
def check(baseline, candidate, threshold, metric, fmt, github_summary, db):
    """Regression gate: exit 1 when any shared scenario regressed beyond noise and threshold."""
    from benchdb.analysis import gate
    from benchdb.reports import render as renderer
    from benchdb.schema import database

    con, _ = database.open_readonly(db)
    try:
        result = gate.compare(con, baseline, candidate, threshold=threshold, metric=metric)
    finally:
        con.close()
    md = renderer.check_markdown(result)
    if github_summary:
        _append_summary(md)
    click.echo(md if fmt == "md" else renderer.check_json(result), nl=False)
    if result.regressed:
        sys.exit(1)


def _append_summary(text: str) -> None:
    import os

    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        raise BenchdbError("--github-summary: $GITHUB_STEP_SUMMARY is not set (it is set inside GitHub Actions jobs)")
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(text)


@main.command()
@click.argument("change_id")
@click.option("--note", required=True, help="Why the shift is intended (kept with the change point).")
@click.option("--db", default=None, help=_DB_HELP)
def ack(change_id, note, db):
    """Accept a change point as intended, so it is no longer reported."""
    from benchdb.analysis import changepoints
    from benchdb.schema import database

    con, _ = database.open_writable(db)
    try:
        full = changepoints.ack(con, change_id, note)
    finally:
        con.close()
    click.echo(f"acknowledged change point {full}: {note}")


# --------------------------------------------------------------------------- quickstart
@main.command()
@click.option("--db", default=None, help=_DB_HELP)
@click.option("--out", default="results", show_default=True, help="Folder for the measurement files.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("report.html"), show_default=True, help="Where to write the HTML report.")
def quickstart(db, out, report_path):
    """Run the smoke suite with every installed backend, ingest it, and write an HTML report."""
    from benchdb.plan import quickstart as qs
    from benchdb.schema import database

    result = qs.run(str(database.resolve_db(db)), out, report_path, progress=_progress_printer(),
                    note=lambda text: click.echo(text, err=True))
    click.echo(result.optimal_markdown)
    click.echo(result.ingest_line)
    click.echo(f"report: {result.report_path.resolve()} (open it in a browser); warehouse: "
               f"{database.resolve_db(db)} (try `benchdb report --matrix` or `benchdb query`)")


# --------------------------------------------------------------------------- hardware
@main.command("hardware")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def hardware_cmd(as_json):
    """What this machine has: CPU, memory, installed backends and their versions."""
    from benchdb.harness import machine as hardware

    rep = hardware.report()
    if as_json:
        click.echo(json.dumps(rep, indent=1, default=str))
        return
    cpu = rep["cpu"]
    click.echo(f"host      {rep['host']} (Python {rep['python']}, {cpu['os']}, {cpu['arch']})")
    click.echo(f"cpu       {cpu['cpu_model']} ({cpu['cores_physical']} physical / "
               f"{cpu['cores_logical']} logical cores; {', '.join(cpu['flags']) or 'no'} extensions)")
    click.echo(f"memory    {cpu['memory_bytes'] / 2**30:.1f} GiB")
    if rep["accelerators"]:
        for acc in rep["accelerators"]:
            mem = f", {acc['memory_bytes'] / 2**30:.0f} GiB" if acc["memory_bytes"] else ""
            click.echo(f"device    {acc['device']}: {acc['name']} ({acc['kind']}{mem})")
    else:
        click.echo("device    cpu only (no CUDA, ROCm, MPS or XPU device visible to PyTorch)")
    tel = rep["nvidia_telemetry"]
    click.echo(f"nvidia    telemetry {tel['status']}: {tel['detail']}")
    if rep["load_avg_1m"] is not None:
        click.echo(f"load      {rep['load_avg_1m']:.2f} (1-min average)")
    for title, items in (("backends", rep["backends"]), ("libraries", rep["libraries"])):
        click.echo(f"{title}:")
        for b in items:
            detail = b["version"] if b["status"] == "available" else f"unavailable - {b['hint']}"
            click.echo(f"  {b['name']:<16} {detail}")


if __name__ == "__main__":  # pragma: no cover
    main()
