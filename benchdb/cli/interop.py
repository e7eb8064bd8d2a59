"""Other tools' result files: `benchdb import` (foreign formats into contract files) and `benchdb export`.

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

import shlex
import sys

import click

from benchdb.cli.help import command
from benchdb.cli.shared_options import db_option

IMPORT_FORMATS = (
    "optimum-benchmark",
    "pytest-benchmark",
    "transformers",
    "hud-v3",
    "mlperf",
    "mlperf-endpoints",
    "vllm-serve",
    "sglang-serve",
    "aiperf",
    "guidellm",
    "lm-eval",
    "inferencex",
    "kernels",
    "llm-d",
)
EXPORT_FORMATS = ("hud-v3", "optimum-benchmark", "vllm-serve", "llm-d")


@command(
    "import",
    examples=(
        (
            "a vLLM serving benchmark's saved result, measured on the machine named h100-node",
            "benchdb import vllm-serve vllm_result.json --hardware h100-node --out imported",
        ),
        ("every optimum-benchmark result under a folder", "benchdb import optimum-benchmark runs/ --out imported"),
    ),
    exit_codes={1: "a file failed (each is named with why on standard error); the others were imported"},
)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(IMPORT_FORMATS))
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--out",
    "out",
    default="results",
    show_default=True,
    help="Folder for the contract files (then: benchdb ingest DIR).",
)
@click.option(
    "--hardware",
    "hardware",
    default=None,
    metavar="NAME",
    help="The hardware the results ran on, where the files do not name it (a serving tool's files "
    "never do): the same name as a benchdb run's --server-hardware gives the same hardware.",
)
@click.option(
    "--hardware-file",
    "hardware_file",
    default=None,
    metavar="FILE",
    help="Instead of --hardware: a hardware file describing the system (YAML or JSON: accelerator, "
    "accelerators_per_node, nodes, cpu, ...; its accelerators and parallelism describe how the "
    "results used it; `benchdb hardware --format yaml` prints one), or `benchdb hardware "
    "--format json` saved on that machine.",
)
@click.option(
    "--engine",
    "engine",
    default=None,
    metavar="NAME",
    help="Serving formats: the engine that served (vllm, sglang, transformers, ...) where the file does "
    "not name it (AIPerf, GuideLLM); else recorded as an OpenAI-compatible server.",
)
@click.option(
    "--model",
    "model",
    default=None,
    metavar="NAME",
    help="The model, for results whose files do not name it (an SGLang line without server_info); "
    "lm-eval: the benchdb model id its scores belong to (default: its pretrained=).",
)
@click.option(
    "--precision",
    "precision",
    default=None,
    metavar="PRECISION",
    help="lm-eval: the precision the scores were measured at, where model_args names no dtype.",
)
@click.option(
    "--round",
    "mlperf_round",
    default=None,
    metavar="VERSION",
    help="mlperf: the round the repository was submitted to (v4.1), whose checker rules judge every "
    "run in it, where its published table, README title or folder name do not say it (a log's "
    "LoadGen version never decides: submitters may run the previous round's LoadGen).",
)
def import_cmd(fmt, paths, out, hardware, hardware_file, engine, model, precision, mlperf_round):
    """Convert other tools' result files into contract files.

    PATHS are files or folders. FORMAT: optimum-benchmark (benchmark.json or
    benchmark_report.json + benchmark_config.json), pytest-benchmark (--benchmark-json),
    transformers (benchmark_v2 results), hud-v3 (PyTorch HUD records: JSON list, object or
    lines), mlperf (LoadGen mlperf_log_summary.txt, or a whole MLPerf Inference results
    repository, division or submitter folder: each run with its system, checked against the
    published table, every disagreement printed); mlperf-endpoints (an MLPerf Endpoints
    submission: each system and model's curve of load points, their regions by the rules,
    tokens/s per kW from system_power.json); serving load points: vllm-serve (vllm bench
    serve --save-result JSON), sglang-serve (sglang.bench_serving --output-file JSON lines),
    aiperf (profile_export.jsonl + profile_export_aiperf.json), guidellm (benchmarks.json or
    .yaml), recomputed in benchdb's serving definitions from their per-request data; accuracy:
    lm-eval (lm-evaluation-harness results.json / results_*.json: task scores for a model,
    precision and hardware, beside its speed); published serving points: inferencex (the
    InferenceX app's /api/v1/benchmarks rows: summary-only, with their system and parallelism);
    kernels (Hugging Face `kernels benchmark --output` JSON: each workload's timing summary);
    llm-d (an llm-d Benchmark Report v0.1, YAML or JSON: a summary-only serving load point with
    its prefill/decode instances).
    A bad file is reported on one line and nothing of it is written; the others are imported.
    Results never take this machine's hardware: a file's own, --hardware or --hardware-file,
    else unknown.
    """
    from benchdb.interop import Declared, declared_hardware, import_files

    if mlperf_round is not None:
        from benchdb.interop.mlperf.rules import round_name
        from benchdb.interop.writer import SourceError

        if fmt != "mlperf":
            raise click.UsageError(f"--round names an MLPerf round; {fmt} files have none (drop it)")
        try:
            mlperf_round = round_name(mlperf_round)
        except SourceError as exc:
            raise click.BadParameter(str(exc), param_hint="--round") from None
    fingerprint, device, usage = declared_hardware(hardware, hardware_file)
    if engine:
        from benchdb.interop.serving_fields import engine_name

        engine = engine_name(engine) or engine.strip().lower()
    summary = import_files(
        fmt, list(paths), out, Declared(fingerprint, device, engine, model, precision, usage, mlperf_round)
    )
    for src, problem in summary.failed:
        click.echo(f"benchdb: error: {src}: {problem}", err=True)
    for note in summary.notes:
        click.echo(note)
    n = sum(k for _, k in summary.imported)
    click.echo(
        f"imported {n} result(s) from {len(summary.imported)} {fmt} file(s) into {out}"
        + (f" ({summary.detail})" if summary.detail else "")
        + (f"; {len(summary.failed)} file(s) failed" if summary.failed else "")
        + (f"; next: benchdb ingest {shlex.quote(str(out))}" if n else "")
    )
    if summary.failed:
        sys.exit(1)


@command(
    "export",
    examples=(
        (
            "every result as PyTorch HUD records, one JSON line per result and metric",
            "benchdb export --format hud-v3 --out results.jsonl",
        ),
        (
            "one model's results as optimum-benchmark reports, one folder each",
            "benchdb export --format optimum-benchmark --model tiny:bert --out exported",
        ),
        ("the whole warehouse as partitioned Parquet for Spark", "benchdb export --partitioned spark-data"),
    ),
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default=None,
    help="hud-v3: JSON lines, one record per result x metric; optimum-benchmark: one "
    "benchmark.json per result; vllm-serve: one `vllm bench serve --save-detailed` JSON per "
    "serving load point (every request, vLLM's summary figures); llm-d: one llm-d Benchmark Report "
    "v0.1 YAML per measured serving load point.",
)
@click.option(
    "--out",
    "out",
    default="-",
    show_default=True,
    help="hud-v3: the .jsonl file (- for standard output); optimum-benchmark, vllm-serve, llm-d: a folder.",
)
@click.option("--model", "models", multiple=True, help="Only these models (repeatable).")
@click.option(
    "--partitioned",
    "partitioned",
    default=None,
    metavar="DIR_OR_URL",
    help="Instead: the whole warehouse as Hive-partitioned Parquet for Spark (a folder or an "
    "fsspec URL); appends what is new to an earlier export.",
)
@db_option()
def export_cmd(fmt, out, models, partitioned, db):
    """Write results in another tool's format.

    Each result goes with its raw samples; --partitioned writes the whole warehouse instead."""
    from benchdb.interop.export_formats import export

    if partitioned is not None:
        if fmt is not None or models:
            raise click.UsageError("--partitioned exports the whole warehouse: leave out --format and --model")
        from benchdb.spark import export_partitioned

        s = export_partitioned(db, partitioned)
        click.echo(
            f"exported {s.results} new result(s) and {s.samples} sample(s) to {partitioned} "
            f"({s.total_results} result(s) in all)"
        )
        return
    # --format is checked here, not by click, so other outputs (--partitioned) can join.
    if fmt is None:
        raise click.UsageError("give --format hud-v3, optimum-benchmark, vllm-serve or llm-d (or --partitioned DIR)")
    if fmt in ("optimum-benchmark", "vllm-serve", "llm-d") and out == "-":
        raise click.BadParameter(f"{fmt} writes one file per result: give --out FOLDER", param_hint="--out")
    results, written = export(db, fmt, out, list(models))
    what = {"hud-v3": "record(s)", "vllm-serve": "result file(s)", "llm-d": "benchmark report(s)"}.get(fmt, "report(s)")
    click.echo(f"exported {results} result(s) as {written} {fmt} {what} to {out}", err=out == "-")


COMMANDS: list = [import_cmd, export_cmd]
