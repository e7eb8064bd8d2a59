"""Reading results: `benchdb report` and the regression gate `benchdb check`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from benchdb.cli.help import command
from benchdb.cli.publish import model_card_options
from benchdb.cli.shared_options import (
    THRESHOLD,
    THRESHOLD_HELP,
    Normalisations,
    append_summary,
    db_option,
    duration_type,
    old_name,
    share_type,
    size_type,
    write_atomic,
)
from benchdb.errors import BenchdbError

_SOURCES_HELP = "Where results come from, per source and MLPerf round, and how many reproduce the publisher's table."
_COST_HELP = "--serving: tokens/s per GPU, $/M tokens (--prices) and tokens/s per MW at this interactivity, per front."


@command(
    "report",
    examples=(
        (
            "the best hardware and backend per model and batch size, within a 50 ms median",
            "benchdb report --optimal-hardware --max-latency 50ms",
        ),
        ("every report as one HTML page", "benchdb report --all --out report.html"),
        ("the section for a model's Hub model card", "benchdb report --model-card tiny:bert"),
    ),
    exit_codes={
        1: "nothing to report: the warehouse holds no results, none matches the filters, or none has "
        "what --objective needs (one line says which)"
    },
)
@model_card_options
@click.option(
    "--optimal-hardware",
    "kinds",
    flag_value="optimal-hardware",
    multiple=True,
    help="Best hardware/backend per model and batch size (and the runner-up).",
)
@click.option("--matrix", "kinds", flag_value="matrix", multiple=True, help="Compatibility matrix.")
@click.option("--speedup", "kinds", flag_value="speedup", multiple=True, help="Speedup vs CPU PyTorch eager.")
@click.option(
    "--speed-accuracy",
    "kinds",
    flag_value="speed-accuracy",
    multiple=True,
    help="Speedup of each precision over fp32 (with its CI) beside its agreement with fp32.",
)
@click.option(
    "--batch-scaling",
    "--scaling",
    "kinds",
    flag_value="batch-scaling",
    multiple=True,
    help="Batch scaling: latency and throughput against batch size (--scaling: the same).",
)
@click.option("--memory", "kinds", flag_value="memory", multiple=True, help="Peak memory.")
@click.option("--trends", "kinds", flag_value="trends", multiple=True, help="Medians over runs.")
@click.option(
    "--regressions", "kinds", flag_value="regressions", multiple=True, help="Open change points in the series' history."
)
@click.option("--sources", "kinds", flag_value="sources", multiple=True, help=_SOURCES_HELP)
@click.option(
    "--serving",
    "kinds",
    flag_value="serving",
    multiple=True,
    help="Serving benchmarks (openai backend): load points, throughput-interactivity frontier and, "
    "with --slo, the best hardware/engine at the SLO (not part of --all).",
)
@click.option(
    "--slo",
    default=None,
    metavar="SLO",
    help="--serving: e.g. ttft:500ms,tpot:50ms (TTFT p90, TPOT p50) or ttft:1s,interactivity:20 (tokens/s per user).",
)
@click.option(
    "--cost-at",
    "cost_at",
    type=click.FloatRange(min=0, min_open=True),
    metavar="TOKENS_PER_S_PER_USER",
    help=_COST_HELP,
)
@click.option("--all", "all_", is_flag=True, help="Every report above but --serving.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "json", "csv"]),
    default=None,
    help="Default: html when --out ends in .html, else md.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (atomically) instead of standard output.",
)
@db_option()
@click.option("--model", "models", multiple=True, help="Only these models (repeatable).")
@click.option("--hardware", "hardware_names", multiple=True, help="Only this hardware, by name or id (repeatable).")
@click.option(
    "--objective",
    type=click.Choice(["throughput", "latency", "energy", "cost"]),
    default="throughput",
    show_default=True,
    help="What --optimal-hardware optimises.",
)
@click.option(
    "--max-latency",
    "max_latency_ms",
    type=duration_type(unit="ms"),
    default=None,
    metavar="DURATION",
    help="Latency budget (median): 250ms, 1.5s (a bare number is seconds).",
)
@old_name("--max-latency-ms", "--max-latency", "max_latency_ms", duration_type(bare="ms"))
@click.option(
    "--max-memory",
    "max_memory_mb",
    type=size_type(unit="MiB"),
    default=None,
    metavar="SIZE",
    help="Peak memory budget: 512MiB, 2GiB, 2GB.",
)
@old_name("--max-memory-mb", "--max-memory", "max_memory_mb", size_type(unit="MiB", bare="MiB"))
@click.option(
    "--max-accuracy-drop",
    type=share_type(),
    default=None,
    help="--optimal-hardware: leave out results that are not fp32 whose accuracy drop against fp32 is "
    "more than PCT, 1% or 0.01 (imported lm-eval scores, else the --sts score, else the output's "
    "agreement with fp32: the result_accuracy view); each one left out is named with why.",
)
@click.option(
    "--per",
    type=Normalisations(),
    default=None,
    help="--optimal-hardware: rank a throughput normalised one of these ways (the first, as is, by default; "
    "a priced one needs --prices) and list every system side by side, published figures marked (no interval).",
)
@click.option(
    "--prices",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="YAML or JSON: hardware name (or, for --serving, id) -> USD per hour (per device for "
    "--serving); for --objective cost and the --serving SLO table. For --per cost also "
    "accelerator_hour: {accelerator name: USD} and/or system_hour: {system name: USD}. "
    "For --cost-at, a folder of such files: one price source each, side by side.",
)
@click.option(
    "--chassis",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="--cost-at: your chassis power model for tokens/s per MW (the fields of benchdb/analysis/chassis.yaml).",
)
@click.option("--github-summary", is_flag=True, help="Also append the Markdown to $GITHUB_STEP_SUMMARY.")
@click.option(
    "--wide",
    is_flag=True,
    help="Markdown: every column, whole (by default a terminal's tables keep "
    "their key columns and fit its width: $COLUMNS, else the terminal's, else 120; --out files are always wide).",
)
@click.option(
    "--engine",
    type=click.Choice(["duckdb", "spark"]),
    default="duckdb",
    show_default=True,
    help="spark: compute the report with pyspark over --data (a `benchdb export --partitioned` copy).",
)
@click.option("--data", default=None, metavar="DIR_OR_URL", help="The partitioned export for --engine spark.")
def report(
    kinds,
    slo,
    cost_at,
    all_,
    fmt,
    out,
    db,
    models,
    hardware_names,
    objective,
    max_latency_ms,
    max_memory_mb,
    max_accuracy_drop,
    per,
    prices,
    chassis,
    github_summary,
    wide,
    engine,
    data,
):
    """Reports: best hardware, compatibility, speedup, trends.

    Choose one or more reports (or --all): optimal hardware, the compatibility matrix, speedup,
    speed against accuracy, batch scaling, peak memory, trends, open regressions, serving, sources.
    Markdown on a terminal; --out FILE.html writes one HTML page."""
    from benchdb.reports import render as renderer
    from benchdb.reports.request import request

    chosen, filters = request(
        kinds,
        every=all_,
        models=models,
        hardware=hardware_names,
        objective=objective,
        max_latency_ms=max_latency_ms,
        max_memory_mb=max_memory_mb,
        max_accuracy_drop=max_accuracy_drop,
        per=per,
        prices=prices,
        slo=slo,
        cost_at=cost_at,
        chassis=chassis,
    )
    fmt = fmt or ("html" if out is not None and out.suffix.lower() in (".html", ".htm") else "md")
    if engine == "spark" or data is not None:
        if "serving" in chosen:
            raise BenchdbError("--serving reads the warehouse's serving views: use --engine duckdb")
        if engine != "spark" or not data:
            raise BenchdbError(
                "--engine spark needs --data DIR_OR_URL (a `benchdb export --partitioned` copy), "
                "and --data needs --engine spark"
            )
        from benchdb.spark.session import report as spark_report

        rep = spark_report(data, chosen, filters, detail=fmt == "html")
    else:
        # HTML also draws every traced result's samples (the drill-down)
        from benchdb.warehouse import READ_WAIT_S, Warehouse

        rep = Warehouse(db, wait_s=READ_WAIT_S).report(chosen, filters, detail=fmt == "html")
    text = renderer.render(rep, fmt, wide or out is not None)  # a file is not a terminal: every column
    if github_summary:  # a browser shows wide tables: every column
        append_summary(renderer.markdown(rep, wide=True))
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(out, text)
        click.echo(f"wrote {out} ({fmt}, {sum(len(s.rows) for s in rep.sections)} rows)", err=True)


_SELECTOR_HELP = (
    "latest = per hardware and backend, its newest run; latest~N = N runs before that on the "
    "same hardware and backend; run:ID, commit:SHA, tag:T, time:A..B pick whole runs."
)


@command(
    "check",
    examples=(
        (
            "gate each machine's and backend's newest run on the run before it",
            "benchdb check --baseline latest~1 --candidate latest",
        ),
        (
            "gate the runs tagged pr-123 on those tagged main (run --tag), threshold 3%",
            "benchdb check --baseline tag:main --candidate tag:pr-123 --threshold 3%",
        ),
        (
            "the same as one HTML page with both distributions (--out FILE to write a file)",
            "benchdb check --baseline latest~1 --candidate latest --format html",
        ),
    ),
    exit_codes={
        0: "pass: every compared series is unchanged, improved or fixed (still_broken is reported, not a new failure)",
        1: "fail: a shared series regressed or broke",
        2: "nothing to compare (no series on both sides, a selector matching no run), an unknown "
        "--metric, or another usage error",
        3: "undecided: nothing failed, but N of M verdicts are inconclusive (--allow-inconclusive makes that exit 0)",
    },
)
@click.option("--baseline", required=True, help="Runs to compare against, e.g. latest~1. " + _SELECTOR_HELP)
@click.option("--candidate", required=True, help="Runs under test (same selector forms), e.g. latest.")
@click.option(
    "--threshold",
    type=THRESHOLD,
    default="5%",
    show_default=True,
    help="Smallest change that matters (the series' own noise x3 raises it)." + THRESHOLD_HELP,
)
@click.option(
    "--metric",
    default=None,
    help="Metric to compare (raw samples); one the selected results do not have is an error (exit 2). Default: the "
    "results' headline metric (latency_s; ttft_s for serving load points, over each side's steady-state window where "
    "both found one; latency_s where they differ). A metric given here is as named: ttft_s is the whole window.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html"]),
    default="md",
    show_default=True,
    help="html: one self-contained page (both distributions, the change with its CI, the threshold "
    "band and the verdict per series).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (atomically) instead of standard output.",
)
@click.option("--github-summary", is_flag=True, help="Also append the Markdown to $GITHUB_STEP_SUMMARY.")
@click.option(
    "--wide",
    is_flag=True,
    help="Markdown: every column, whole (by default lines fit the terminal: $COLUMNS, else its width, else 120; "
    "--out files are always wide).",
)
@click.option(
    "--allow-inconclusive",
    is_flag=True,
    help="Exit 0 when nothing failed, even if some verdicts are inconclusive (default: exit 3).",
)
@db_option()
def check(baseline, candidate, threshold, metric, fmt, out, github_summary, wide, allow_inconclusive, db):
    """Regression gate: compare two selections of runs.

    It compares the series (scenario + options + hardware) both selections measured; only the
    same series is ever compared. `latest` / `latest~N` work per hardware and backend: for
    each (hardware, backend) the newest run that measured it, or the N-th run before that; so
    several machines feeding one warehouse, or one `benchdb run` per backend, are each compared
    with their own previous run.

    \b
    Verdicts (failing first):
      broken        fails: the candidate failed (oom, timeout, mismatch,
                    unsupported) where the baseline was ok
      regressed     fails: the whole 95% CI of the median's change is beyond
                    the threshold
      inconclusive  the CI straddles the threshold; run-to-run noise unknown
                    (separate runs, under 8 runs of history: compare an --ab
                    run); too few samples; invalid or skipped
      still_broken  broken on both sides (reported, not a new failure)
      improved      the whole 95% CI is beyond the threshold, the good way
      fixed         broken in the baseline, ok in the candidate
      unchanged     the whole 90% CI is within +-threshold (an equivalence test)
    """
    from benchdb.reports import render as renderer
    from benchdb.warehouse import READ_WAIT_S, Warehouse

    wh = Warehouse(db, wait_s=READ_WAIT_S)
    try:
        result = wh.check(baseline, candidate, threshold=threshold, metric=metric)
    except BenchdbError as exc:
        if fmt == "json":
            click.echo(renderer.check_error_json(baseline, candidate, metric, str(exc), exc.exit_code), nl=False)
        if github_summary:
            try:
                append_summary(renderer.check_error_markdown(baseline, candidate, str(exc), exc.exit_code))
            except BenchdbError:
                pass  # no $GITHUB_STEP_SUMMARY: the original error is the one to report
        raise
    result.allow_inconclusive = allow_inconclusive
    md = renderer.check_markdown(result, wide or out is not None)
    if github_summary:
        append_summary(renderer.check_markdown(result, wide=True))
    if fmt == "html":
        from benchdb.reports import check_page

        with wh.reading() as con:
            text = check_page.html(con, result)
    else:
        text = md if fmt == "md" else renderer.check_json(result)
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(out, text)
        click.echo(f"wrote {out} ({fmt}, {len(result.comparisons)} series)", err=True)
    if result.exit_code:
        sys.exit(result.exit_code)


COMMANDS = (report, check)
