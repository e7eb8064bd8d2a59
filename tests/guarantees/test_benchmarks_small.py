"""Every script in benchmarks/ runs in its --small mode and prints its key lines with sane figures,
so a change that breaks a benchmark (an exception, a non-zero exit, a figure no longer printed, or
printed as 0 requests, 0/N agreeing, a ratio no machine gives) fails CI. Nothing here judges a
timing: the speed goals stay in the scripts, measured against their baselines in the same run. The
comparisons with GuideLLM, AIPerf and optimum-benchmark run on those tools' recorded output
(benchmarks/recorded/), through the same code as a live run. benchmarks/gpu/ needs a GPU machine:
its shell scripts are only parsed (bash -n) and its Python scripts compiled."""

from __future__ import annotations

import math
import os
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import fail_in_ci, have_browser, have_java
from support import shared_exports

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
#: A hang is a failure too, but no script's speed is judged: far above any --small run.
TIMEOUT_S = 600


class Figure(NamedTuple):
    """What one figure a key line prints must be: a sane value, not a goal (no speed is judged)."""

    what: str
    ok: Callable[[float], bool]


def _between(low: float, high: float) -> Callable[[float], bool]:
    return lambda v: low < v < high


#: A time, a size, a median, a rate: above 0.
POSITIVE = Figure("a number > 0", lambda v: v > 0)
#: Results, files, requests, comparisons, calls: what a run that did its work cannot have none of.
COUNT = Figure("a whole number >= 1", lambda v: v >= 1 and v == int(v))
#: A count that may be 0 in a --small run (wins called, agreements of a noisy pair).
TALLY = Figure("a whole number >= 0", lambda v: v >= 0 and v == int(v))
#: The ratio of two different things (a tool against a baseline, memo against computed).
RATIO = Figure("a ratio in (0, 50)", _between(0, 50))
#: Two measures of the same work (benchdb against a bare loop, measured against the stub's truth).
SAME_WORK = Figure("a ratio of two measures of the same work, in (0.1, 10)", _between(0.1, 10))
PERCENT = Figure("a percentage in [0, 100]", lambda v: 0 <= v <= 100)
SOME_PERCENT = Figure("a percentage in (0, 100]", lambda v: 0 < v <= 100)


class Line(NamedTuple):
    """A line a script must print (``pattern``, re.MULTILINE) and what each group it captures must
    be; ``at_most``: pairs (i, j) of groups where the i-th may not exceed the j-th (a/b)."""

    pattern: str
    figures: tuple[Figure, ...] = ()
    at_most: tuple[tuple[int, int], ...] = ()


#: Each script's key lines in --small mode, every figure on them checked: a line printed with a
#: broken figure (0 requests, 0/N agreeing, a ratio of 0 or 10^6, nan) fails as a missing line does.
KEY_LINES: dict[str, list[Line]] = {
    "bisect_noise.py": [
        Line(r"^(\d+) commits, commit \d+ does ([\d.]+)x the work", (COUNT, POSITIVE)),
        Line(r"^benchdb\s+(\d+)/(\d+)\s", (TALLY, COUNT), ((0, 1),)),
        Line(r"^git bisect run\s+(\d+)/(\d+)\s", (TALLY, COUNT), ((0, 1),)),
    ],
    "bootstrap.py": [
        Line(r"^(\d+) bootstrap medians of (\d+) values \(from n = (\d+)\)", (COUNT, COUNT, COUNT)),
        Line(r"ratio exact/resampled ([\d.]+)$", (RATIO,)),
        Line(r"95 % interval of the median, exact\s+\[([\d.e+-]+), ([\d.e+-]+)\]", (POSITIVE, POSITIVE), ((0, 1),)),
    ],
    "changepoints.py": [
        Line(r"update\(con, \[new run\]\), window (\d+): [\d.]+ s.*; (\d+) open change points", (COUNT, COUNT)),
        Line(r"old / new time: \d+x; same change points: True$"),
    ],
    "dashboard.py": [
        Line(r"^worst p95 quiet, computed: ([\d.]+) ms", (POSITIVE,)),
        Line(r"^worst p95 busy, kept: ([\d.]+) ms", (POSITIVE,)),
        Line(r"^worst p95 quiet, first after a write: ([\d.]+) ms", (POSITIVE,)),
        Line(r"^benchdb site: (\d+) files, ([\d.]+) MiB, built in ([\d.]+) s", (COUNT, POSITIVE, POSITIVE)),
        Line(r"^worst static p95 ([\d.]+) ms", (POSITIVE,)),
    ],
    "gate_real.py": [
        Line(r"^  ab\s+(\d+) comparisons", (COUNT,)),
        Line(r"^  slowdown\s+(\d+) comparisons", (COUNT,)),
        Line(r"all A/A: (\d+) comparisons, (\d+) false alarm", (COUNT, TALLY), ((1, 0),)),
    ],
    "harness_overhead.py": [
        Line(
            r"bare loop\s+([\d.]+) ns/iter, benchdb loop\s+([\d.]+) ns/iter, overhead\s+[+-][\d.]+ ns/iter",
            (POSITIVE, POSITIVE),
        ),
        Line(r"^tiny BERT .* ratio \(median of (\d+) paired blocks\)\s+([\d.]+)", (COUNT, SAME_WORK)),
        Line(r"^BERT-base-shaped .* ratio \(median of (\d+) paired blocks\)\s+([\d.]+)", (COUNT, SAME_WORK)),
    ],
    "import_mlperf.py": [
        Line(r"^first: import ([\d.]+) s \(exit 0, 0 error", (POSITIVE,)),
        Line(r"^  import: imported (\d+) result\(s\) from (\d+) mlperf file", (COUNT, COUNT)),
        Line(r"^again: import ([\d.]+) s \(exit 0, 0 error", (POSITIVE,)),
        # its baseline reads a few small files (about 0.05 s): the ratio is large, and only sane here
        Line(r"^ratio \(import \+ ingest\) / bare read: ([\d.]+)x", (POSITIVE,)),
        Line(r"^\s+(\d+)\s+(\d+)\s+(\d+)$", (COUNT, COUNT, COUNT)),  # results, systems, statistics
    ],
    "ingest.py": [
        Line(r"^generated ([\d,]+) samples in (\d+) files", (COUNT, COUNT)),
        Line(
            r"^benchdb ingest\s+:\s+([\d.]+) s\s+([\d.]+) M samples/s.*, (\d+) results\)", (POSITIVE, POSITIVE, COUNT)
        ),
        Line(r"^ratio ingest / raw rate\s+:\s+([\d.]+)x", (RATIO,)),
        Line(r"^no-op re-ingest\s+:\s+([\d.]+) s", (POSITIVE,)),
    ],
    "openvino_hints.py": [
        Line(r"^latency\s+median latency \(ms\)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", (POSITIVE, POSITIVE, SAME_WORK)),
        Line(r"^throughput items/s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", (POSITIVE, POSITIVE, SAME_WORK)),
    ],
    "ortweb.py": [Line(r"^tiny:bert\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+)x", (POSITIVE, POSITIVE, RATIO))],
    "parallel.py": [
        Line(r"^(\d+) single-thread scenarios: serial median ([\d.]+) s", (COUNT, POSITIVE)),
        Line(r"--parallel 2 ([\d.]+) s: ([\d.]+)x", (POSITIVE, RATIO)),
        # a tally: on a busy machine the pinned serial run can be slowed beside every parallel median
        # (0/2 seen in CI with the unpinned run agreeing 1/2), so only its shape is checked
        Line(
            r"^parallel medians agree with the pinned serial run: (\d+)/(\d+), with the unpinned serial run: "
            r"(\d+)/(\d+)",
            (TALLY, COUNT, TALLY, COUNT),
            ((0, 1), (2, 3)),
        ),
        Line(r"^duet time / interleaved time: ([\d.]+)x", (RATIO,)),
    ],
    "predict_eval.py": [
        Line(r"^(\d+) results, 3 models, 2 hardware configurations", (COUNT,)),
        Line(
            r"^leave one model out\s+(\d+)\s+roofline\s+(\d+)/(\d+)\s+([\d.]+) %",
            (COUNT, COUNT, COUNT, POSITIVE),
            ((1, 2),),
        ),
    ],
    "preload_isolation.py": [
        Line(r"own server ([\d.]+) ms, server that also imported ONNX Runtime ([\d.]+) ms", (POSITIVE, POSITIVE)),
        Line(r"ratio ([\d.]+)x \(1\.00x: no effect\)", (SAME_WORK,)),
    ],
    "quantization.py": [
        Line(
            rf"^{backend}\s+{precision}\s+{method}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+) \[[^\]]*\]\s+([\d.]+)%",
            (POSITIVE, POSITIVE, RATIO, SOME_PERCENT),  # median, fp32 median, speedup, cosine
        )
        for backend, precision, method in (
            ("onnxruntime", "int8", "dynamic"),
            ("onnxruntime", "int8", "static"),
            ("openvino", "int8", "static"),
            ("openvino", "int4", "weights"),
            ("pytorch", "int8", "dynamic"),
        )
    ],
    "quickstart_repeat.py": [
        Line(r"^- \w+: (\d+) calls, (\d+) confirmed by every other run", (COUNT, TALLY), ((1, 0),)),
        # one quickstart in --small: no call is confirmed by another run, so 0 of 0 is its answer
        Line(r"Win calls confirmed by every other run: (\d+) of (\d+)", (TALLY, TALLY), ((0, 1),)),
    ],
    "quickstart_time.py": [
        Line(r"(\d+) latest timing results", (COUNT,)),
        # --small times one quickstart for both sides: its ratio is 1 by construction
        Line(r"^quickstart wall time: HEAD ([\d.]+) s, now ([\d.]+) s .*; ratio 1\.00 \(", (POSITIVE, POSITIVE)),
    ],
    "regressions_eval.py": [
        Line(r"^  step\s+5%: recall\s+([\d.]+)%", (PERCENT,)),
        # seeded series with a 20 % step on 1 % noise: a detector that finds none is broken
        Line(r"^  step\s+20%: recall\s+([\d.]+)%", (SOME_PERCENT,)),
        Line(r"^  no change\s+: false alarms\s+([\d.]+)%", (PERCENT,)),
        # a real A/A pair: its change and interval, or, beside a busy neighbour, inconclusive and why
        Line(
            r"^  pair 1: (?:change [+-][\d.]+% CI \[[+-][\d.]+%, [+-][\d.]+%\] n=[1-9]\d*/[1-9]\d*"
            r"|inconclusive \(.+\) \(exit 3\))",
            (),
        ),
    ],
    "report.py": [
        Line(r"^warehouse: ([\d,]+) results, ([\d,]+) samples", (COUNT, COUNT)),
        Line(
            r"^report --optimal-hardware\s+: in-process best\s+([\d.]+) ms, median\s+([\d.]+) ms \(\s*([\d.]+)x",
            (POSITIVE, POSITIVE, RATIO),
            ((0, 1),),
        ),
        Line(r"^full command benchdb check\s+: median\s+([\d.]+) ms", (POSITIVE,)),
        Line(r"^benchdb report --optimal-hardware: answered from the memo / computed = ([\d.]+)x", (RATIO,)),
        Line(r"^benchdb check: answered from the memo / computed = ([\d.]+)x", (RATIO,)),
    ],
    "scale.py": [
        Line(r"^([\d,]+) samples \(2 series x 3 nights\)", (COUNT,)),
        Line(r"^growth against ([\d,]+) samples", (COUNT,)),
        Line(r"^report --optimal-hardware\s+([\d.]+)x; ([\d.]+)x\s+([\d.]+)x", (RATIO, RATIO, RATIO)),
    ],
    "serving_client.py": [
        Line(
            rf"^benchdb\s+{conc}\s+(\d+)\s+0\s+([\d.]+) \([^)]*\)\s+([\d.]+) \([^)]*\)\s+([\d.]+)$",
            (COUNT, POSITIVE, POSITIVE, POSITIVE),
        )
        for conc in (1, 8)  # requests, TTFT and ITL medians (ms), CPU s; no error
    ]
    + [
        # its start-up CPU; its CPU per chunk is printed but not judged here: at --small's 16 to 48
        # requests the slope is noise beside a busy neighbour (a busy CI run printed -294.4 us)
        Line(r"^benchdb\s+[-\d.]+\s+([\d.]+)\s+\S+\s+[+-][\d.]+ %\s+[+-][\d.]+ %$", (POSITIVE,)),
        # the comparison with GuideLLM, on its recorded reports (benchmarks/recorded/serving_client/)
        Line(r"^guidellm: replayed, not run: GuideLLM 0\.8\.1's reports at these settings"),
    ]
    + [
        Line(
            rf"^guidellm\s+{conc}\s+(\d+)\s+0\s+([\d.]+) \([^)]*\)\s+([\d.]+) \([^)]*\)\s+([\d.]+)$",
            (COUNT, POSITIVE, POSITIVE, POSITIVE),
        )
        for conc in (1, 8)
    ]
    # its start-up CPU; not its CPU per chunk, which at --small's few requests is noise around a
    # start-up of many seconds (the recorded slope is negative)
    + [Line(r"^guidellm\s+[-\d.]+\s+([\d.]+)\s+\S+\s+[+-][\d.]+ %\s+[+-][\d.]+ %$", (POSITIVE,))],
    "serving_workloads.py": [
        # requests, none bad (every record matched to a stub request); TTFT measured/truth of each
        # class; ITL ms. The peers' rows replay their recorded runs (benchmarks/recorded/serving_workloads/).
        # GuideLLM's TTFT holds about 1.3 ms of its own beside benchdb's 0.5 ms: against --small's
        # 5 ms truth its ratios are about 1.2, well inside SAME_WORK.
        Line(
            rf"^{part}\s+{client}\s+(\d+)\s+0\s+([\d.]+)\s+([\d.]+)\s+[+-][\d.]+\s+([\d.]+) ",
            (COUNT, SAME_WORK, SAME_WORK, POSITIVE),
        )
        for part, client in (
            ("multi-turn", "benchdb"),
            ("trace", "benchdb"),
            ("multi-turn", r"guidellm \(recorded\)"),
            ("trace", r"aiperf \(recorded\)"),
        )
    ]
    + [
        Line(rf"^{peer}: replayed, not run: {tool} {version}'s output and the stub's truth log of that run")
        for peer, tool, version in (("guidellm", "GuideLLM", r"0\.8\.1"), ("aiperf", "AIPerf", r"0\.13\.0"))
    ],
    "spark.py": [
        Line(r"^warehouse: (\d+) results, ([\d,]+) samples", (COUNT, COUNT)),
        Line(r"^export --partitioned: (\d+) results, ([\d,]+) samples", (COUNT, COUNT)),
        # Spark s and Spark/DuckDB: a JVM's first calls are hundreds of times DuckDB's, so no band
        Line(r"^views\s+[\d.]+\s+([\d.]+)\s+([\d.]+)$", (POSITIVE, POSITIVE)),
        Line(r"^report --matrix\s+[\d.]+\s+([\d.]+)\s+([\d.]+)$", (POSITIVE, POSITIVE)),
        Line(r"^stats from samples\s+[\d.]+\s+([\d.]+)\s+([\d.]+)$", (POSITIVE, POSITIVE)),
    ],
    "startup_tricks.py": [
        Line(
            r"^DuckDB import .* with\s+([\d.]+) ms\s+without\s+([\d.]+) ms .*\(([\d.]+)x\)", (POSITIVE, POSITIVE, RATIO)
        ),
        Line(
            r"^benchdb report .* with\s+([\d.]+) ms\s+without\s+([\d.]+) ms .*\(([\d.]+)x\)",
            (POSITIVE, POSITIVE, RATIO),
        ),
    ],
    "time_to_result.py": [
        Line(
            r"^round 1 benchdb\s+wall\s+([\d.]+) s\s+median\s+([\d.]+) ms\s+valid \w+\s+n (\d+)",
            (POSITIVE, POSITIVE, COUNT),
        ),
        Line(r"^benchdb / bare loop wall time: ([\d.]+)x", (SAME_WORK,)),
        Line(r"^benchdb median latency / bare's, per round \(agreement\): ([\d.]+)", (SAME_WORK,)),
        # the comparison with optimum-benchmark, on its recorded run (benchmarks/recorded/time_to_result/)
        Line(r"^optimum-benchmark: replayed, not run: optimum-benchmark 0\.6\.0's recorded runs"),
        Line(
            r"^round 1 optimum-benchmark\s+wall\s+([\d.]+) s\s+median\s+([\d.]+) ms\s+valid True\s+n (\d+)",
            (POSITIVE, POSITIVE, COUNT),
        ),
        Line(
            r"^optimum-benchmark median latency / bare \(optimum venv\)'s, per round \(agreement\): ([\d.]+)",
            (SAME_WORK,),
        ),
        Line(r"^benchdb / optimum-benchmark wall time: ([\d.]+)x", (RATIO,)),
    ],
}


def key_lines(script: str) -> list[Line]:
    """What ``script`` must print here: a peer this machine lacks is skipped with a line saying so
    (CI installs Chromium, onnxruntime-web's files and Java, so there the figures are required)."""
    from benchdb.backends import registry
    from benchdb.harness import hardware

    if script == "ortweb.py" and hardware.availability(registry.info("ort-web"))["status"] != "available":
        if have_browser() is None:
            fail_in_ci("Chromium or playwright")
        return [Line(r"^ort-web: skipped \("), Line(r"^tiny:bert\s+wasm: -; native: ok")]
    if script == "spark.py" and not have_java():
        fail_in_ci("Java 17 (for Spark)")
        return [Line(r"^Spark: skipped \(")]
    return KEY_LINES[script]


@pytest.mark.core
def test_every_benchmark_script_has_its_small_run():
    """A new script in benchmarks/ gets its --small case here (and so runs in CI)."""
    assert sorted(p.name for p in BENCHMARKS.glob("*.py")) == sorted(KEY_LINES)


#: Scripts that run `benchdb quickstart` (the same exports of the smoke suite's models): they share
#: one benchdb cache in the test session, so only the first of them exports (quickstart_time.py's second
#: quickstart always ran on a warm cache); each still runs every step of its own. A folder the xdist
#: workers share rather than a module fixture, so that each script is its own unit of work for the
#: scheduler (tests/conftest.py), not the whole module on one worker.
SHARED_CACHE = ("quickstart_repeat.py", "quickstart_time.py")


#: Scripts that measure tiny models at the shapes the backend tests export them (batch 1, seq len
#: 128): they take their exports from the session's shared export cache (tests/support/shared_exports.py).
SHARED_EXPORTS = ("ortweb.py",)


def _env(tmp_path: Path, cache: Path | None = None) -> dict[str, str]:
    """Everything a script writes goes under ``tmp_path`` (or ``cache``, a temporary folder too): its
    temporary folders, benchdb's cache (exports, bisect environments, answers), and what the
    libraries it drives keep in a home folder (Chromium's profile, OpenVINO's and ONNX Runtime's
    files). onnxruntime-web's files, fetched once by CI, are read where they are."""
    from benchdb.backends.ortweb import assets

    env = {k: v for k, v in os.environ.items() if k not in ("BENCHDB_DB", "BENCHDB_NO_CACHE")}
    for name in ("tmp", "cache", "home"):
        (tmp_path / name).mkdir()
    env.update(
        TMPDIR=str(tmp_path / "tmp"), BENCHDB_CACHE=str(cache or tmp_path / "cache"), HOME=str(tmp_path / "home")
    )
    if not assets.missing():
        env["BENCHDB_ORTWEB_DIR"] = str(assets.folder())
    return env


#: Scripts whose key lines need a quiet machine, so they run alone: quantization.py prints a row
#: only for a valid result, and beside another test its PyTorch int8 row is left out (seen in CI
#: with up to 0.5 s a precision, as with 0.1 s); time_to_result.py's two-thread bare loop, run
#: beside another test, measured a median 12x benchdb's of the same round (27.5 against 2.3 ms, CI
#: at cfba0ec), which its agreement check rightly calls not a measure of the same work.
QUIET = {"quantization.py", "time_to_result.py"}
#: Scripts that measure with two threads (--threads 2) or on two parallel workers: they need every
#: CPU, not the one their xdist worker is pinned to (tests/support/serial_lock.py).
ALL_CPUS = {"openvino_hints.py", "ortweb.py", "parallel.py", "predict_eval.py", "time_to_result.py"}


def _marks(script: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.serial] * (script in QUIET) + [pytest.mark.all_cpus] * (script in ALL_CPUS)


@pytest.fixture
def short_tmp():
    """A folder with a short path for a script's files: Chromium keeps a Unix socket in its profile,
    whose path may not pass 107 bytes, and an xdist worker's tmp_path is longer than pytest's own
    (ortweb.py's Chromium closed at launch there: TargetClosedError)."""
    path = Path(tempfile.mkdtemp(prefix="bdb-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("script", [pytest.param(s, marks=_marks(s)) for s in sorted(KEY_LINES)])
def test_small_run(script, short_tmp, request):
    cwd = short_tmp / "cwd"
    cwd.mkdir()
    factory = request.getfixturevalue("tmp_path_factory")
    cache = shared_exports.folder(factory, "quickstart-cache") if script in SHARED_CACHE else None
    if script in SHARED_EXPORTS:
        cache = shared_exports.folder(factory)
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--small"],
        cwd=cwd,
        env=_env(short_tmp, cache),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{script} --small exited {proc.returncode}:\n{out[-4000:]}"
    found = {line: re.search(line.pattern, proc.stdout, re.MULTILINE) for line in key_lines(script)}
    missing = [line.pattern for line, m in found.items() if m is None]
    assert not missing, f"{script} --small did not print {missing}:\n{out[-4000:]}"
    insane = [problem for line, m in found.items() if m for problem in _insane(line, m)]
    assert not insane, f"{script} --small printed figures that cannot be right: {insane}\n{out[-4000:]}"
    assert not any(cwd.iterdir()), f"{script} wrote into its working directory: {sorted(cwd.iterdir())}"


def _insane(line: Line, match: re.Match) -> list[str]:
    """What is wrong with the figures ``match`` captured of ``line``: each against its Figure, and
    each (i, j) of ``at_most``."""
    groups = match.groups()
    assert len(groups) == len(line.figures), f"{line.pattern}: {len(groups)} groups, {len(line.figures)} figures"
    values = [_number(g) for g in groups]
    out = [
        f"{match.group(0)!r}: {g!r} is not {fig.what}"
        for g, v, fig in zip(groups, values, line.figures, strict=True)
        if v is None or not fig.ok(v)
    ]
    return out + [
        f"{match.group(0)!r}: {groups[i]} exceeds {groups[j]}"
        for i, j in line.at_most
        if None not in (values[i], values[j]) and values[i] > values[j]  # type: ignore[operator]
    ]


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@pytest.mark.core
@pytest.mark.parametrize("script", sorted(p.name for p in (BENCHMARKS / "gpu").glob("*.sh")))
def test_gpu_shell_script_parses(script):
    """benchmarks/gpu/*.sh run on a GPU machine only; here their syntax is checked."""
    bash = shutil.which("bash")
    assert bash is not None
    proc = subprocess.run([bash, "-n", str(BENCHMARKS / "gpu" / script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_gpu_verify_script_runs_its_steps_and_packs_them_on_a_cpu_machine(tmp_path):
    """verify.sh's set-up (work folder, step runner, wheels) runs before any GPU step: here with its
    hardware step alone, no GPU and this python, it must time that step and pack the folder (it once
    lost its set-up lines and only a run on the GPU machine would have shown it)."""
    out = tmp_path / "out"
    env = {**os.environ, "NO_WHEELS": "1", "PYTHON": sys.executable, "BUDGET": "60"}
    proc = subprocess.run(
        ["bash", str(BENCHMARKS / "gpu" / "verify.sh"), str(out), "hardware"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    log = (out / "steps.log").read_text()
    assert re.search(r"^== hardware rc=0 ms=\d+", log, re.MULTILINE), log
    assert (out / "gpu.tar.gz").stat().st_size > 0


@pytest.mark.core
@pytest.mark.parametrize(
    "path",
    sorted(
        str(p.relative_to(BENCHMARKS)) for folder in ("gpu", "gate_benches") for p in (BENCHMARKS / folder).glob("*.py")
    ),
)
def test_other_benchmark_python_compiles(path, tmp_path):
    """Scripts run on a GPU machine, and the benches gate_real.py runs, compile (doraise: a syntax
    error fails)."""
    py_compile.compile(str(BENCHMARKS / path), cfile=str(tmp_path / "x.pyc"), doraise=True)
