"""Every format `benchdb import` reads and `benchdb export` writes, registered here once: the command
line's choices and help, the module that reads a format and the name its results record as their
source are all read from these two tables. Adding an importer is its module and one line in
:data:`IMPORTERS` (and its line in docs/guides/interop.md).

Imports nothing: the command line reads it at start-up.
"""

from __future__ import annotations

from typing import NamedTuple


class Importer(NamedTuple):
    """One format `benchdb import` reads."""

    #: FORMAT on the command line.
    name: str
    #: The module under ``benchdb.interop`` that reads it: ``FILES`` (the file names it picks from a
    #: folder) and ``parse(path) -> list[Imported]``, or ``import_paths`` for files that make sense
    #: only together (an MLPerf results repository).
    module: str
    #: Recorded as the results' source format (options.source, result_sources.format).
    source: str
    #: The files it reads, in words (the command's help).
    reads: str


#: What a serving tool's load points become.
RECOMPUTED = ": serving load points, recomputed in benchdb's definitions from each request"

IMPORTERS: tuple[Importer, ...] = (
    Importer(
        "optimum-benchmark",
        "optimum_benchmark",
        "optimum-benchmark",
        "benchmark.json, or benchmark_report.json + benchmark_config.json",
    ),
    Importer("pytest-benchmark", "pytest_benchmark", "pytest-benchmark", "the JSON of --benchmark-json"),
    Importer("transformers", "transformers_v2", "transformers-benchmark-v2", "benchmark_v2 results"),
    Importer("hud-v3", "hud_v3", "hud-v3", "PyTorch HUD records: JSON list, object or lines"),
    Importer(
        "mlperf",
        "mlperf.repo",  # whole results repositories, and lone LoadGen logs (mlperf/loadgen_log.py)
        "mlperf-loadgen",
        "LoadGen mlperf_log_summary.txt, or a whole MLPerf Inference results repository, division or "
        "submitter folder: each run with its system, checked against the published table, every "
        "disagreement printed",
    ),
    Importer(
        "mlperf-endpoints",
        "mlperf.endpoints",
        "mlperf-endpoints",
        "an MLPerf Endpoints submission: each system and model's curve of load points, their regions "
        "by the rules, tokens/s per kW from system_power.json",
    ),
    Importer("vllm-serve", "vllm_serve", "vllm-bench-serve", "vllm bench serve --save-result JSON" + RECOMPUTED),
    Importer(
        "sglang-serve",
        "sglang_serve",
        "sglang-bench-serving",
        "sglang.bench_serving --output-file JSON lines" + RECOMPUTED,
    ),
    Importer("aiperf", "aiperf", "aiperf", "profile_export.jsonl + profile_export_aiperf.json" + RECOMPUTED),
    Importer("guidellm", "guidellm", "guidellm", "benchmarks.json or .yaml" + RECOMPUTED),
    Importer(
        "lm-eval",
        "lm_eval",
        "lm-evaluation-harness",
        "lm-evaluation-harness results.json / results_*.json: task scores (accuracy) for a model, "
        "precision and hardware, beside its speed",
    ),
    Importer(
        "inferencex",
        "inferencex",
        "inferencex",
        "the InferenceX app's /api/v1/benchmarks rows: published serving points, summary-only, with "
        "their system and parallelism",
    ),
    Importer(
        "kernels",
        "kernels_bench",
        "kernels-benchmark",
        "Hugging Face `kernels benchmark --output` JSON: each workload's timing summary",
    ),
    Importer(
        "llm-d",
        "llmd",
        "llm-d-benchmark-report",
        "an llm-d Benchmark Report v0.1, YAML or JSON: a summary-only serving load point with its "
        "prefill/decode instances",
    ),
)


class Exporter(NamedTuple):
    """One format `benchdb export` writes (:mod:`benchdb.interop.export_formats`)."""

    #: --format on the command line.
    name: str
    #: What it writes, in words (the option's help).
    writes: str
    #: What the command's last line counts.
    noun: str
    #: One file per result: --out is a folder (else a file, - for standard output).
    folder: bool


EXPORTERS: tuple[Exporter, ...] = (
    Exporter("hud-v3", "JSON lines, one record per result x metric", "record(s)", folder=False),
    Exporter("optimum-benchmark", "one benchmark.json per result", "report(s)", folder=True),
    Exporter(
        "vllm-serve",
        "one `vllm bench serve --save-detailed` JSON per serving load point (every request, vLLM's summary figures)",
        "result file(s)",
        folder=True,
    ),
    Exporter(
        "llm-d", "one llm-d Benchmark Report v0.1 YAML per measured serving load point", "benchmark report(s)", True
    ),
)


def importer(name: str) -> Importer:
    """The registered importer of format ``name`` (KeyError: none is)."""
    return {i.name: i for i in IMPORTERS}[name]


def exporter(name: str) -> Exporter:
    """The registered exporter of format ``name`` (KeyError: none is)."""
    return {e.name: e for e in EXPORTERS}[name]


def import_names() -> tuple[str, ...]:
    """The formats `benchdb import` reads, in the order its help lists them."""
    return tuple(i.name for i in IMPORTERS)


def export_names() -> tuple[str, ...]:
    """The formats `benchdb export` writes, in the order its help lists them."""
    return tuple(e.name for e in EXPORTERS)
