"""Every script in benchmarks/ runs in its --small mode and prints its key lines, so a change that
breaks a benchmark (an exception, a non-zero exit, a figure no longer printed) fails CI. Nothing
here judges a timing: the speed goals stay in the scripts, measured against their baselines in
the same run. benchmarks/gpu/ needs a GPU machine: its shell scripts are only parsed (bash -n) and
its Python scripts compiled."""

from __future__ import annotations

import math
import os
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import fail_in_ci, have_browser, have_java
from support import shared_exports

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
#: A hang is a failure too, but no script's speed is judged: far above any --small run.
TIMEOUT_S = 600

#: Each script's key lines in --small mode: one pattern (re.MULTILINE) per line that must be printed.
#: Every group a pattern captures is a figure that must be a finite number above 0 (a ratio, a
#: median, a count that cannot be 0): a line printed with a broken figure fails too.
KEY_LINES = {
    "bisect_noise.py": [r"^benchdb\s+\d+/\d+\s", r"^git bisect run\s+\d+/\d+\s"],
    "bootstrap.py": [r"ratio exact/resampled ([\d.]+)$", r"95 % interval of the median, exact\s+\["],
    "changepoints.py": [
        r"update\(con, \[new run\]\), window \d+: [\d.]+ s",
        r"old / new time: \d+x; same change points",
    ],
    "dashboard.py": [
        r"^worst p95 quiet, computed: ([\d.]+) ms",
        r"^worst p95 busy, kept: ([\d.]+) ms",
        r"^worst p95 quiet, first after a write: ([\d.]+) ms",
        r"^benchdb site: \d[\d,]* files, ([\d.]+) MiB, built in ([\d.]+) s",
        r"^worst static p95 ([\d.]+) ms",
    ],
    "gate_real.py": [r"^  ab\s+(\d+) comparisons", r"^  slowdown\s+(\d+) comparisons", r"all A/A: (\d+) comparisons"],
    "harness_overhead.py": [
        r"overhead\s+[+-][\d.]+ ns/iter",
        r"^tiny BERT .* ratio \(median of \d+ paired blocks\)\s+([\d.]+)",
        r"^BERT-base-shaped .* ratio \(median of \d+ paired blocks\)\s+([\d.]+)",
    ],
    "import_mlperf.py": [
        r"^first: import [\d.]+ s \(exit 0, 0 error",
        r"^again: import [\d.]+ s \(exit 0, 0 error",
        r"^ratio \(import \+ ingest\) / bare read: ([\d.]+)x",
    ],
    "ingest.py": [r"^ratio ingest / raw rate\s+:\s+([\d.]+)x", r"^no-op re-ingest\s+:\s+[\d.]+ s"],
    "openvino_hints.py": [
        r"^latency\s+median latency \(ms\)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)",
        r"^throughput items/s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)",
    ],
    "ortweb.py": [r"^tiny:bert\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+)x"],
    "parallel.py": [
        r"--parallel 2 ([\d.]+) s: ([\d.]+)x",
        r"^parallel medians agree with the pinned serial run: \d+/(\d+)",
        r"^duet time / interleaved time: ([\d.]+)x",
    ],
    "predict_eval.py": [
        r"^(\d+) results, 3 models, 2 hardware configurations",
        r"^leave one model out\s+\d+\s+roofline\s+\d+/(\d+)",
    ],
    "preload_isolation.py": [r"ratio ([\d.]+)x \(1\.00x: no effect\)"],
    "quantization.py": [
        rf"^{backend}\s+{precision}\s+{method}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+) "
        for backend, precision, method in (
            ("onnxruntime", "int8", "dynamic"),
            ("onnxruntime", "int8", "static"),
            ("openvino", "int8", "static"),
            ("openvino", "int4", "weights"),
            ("pytorch", "int8", "dynamic"),
        )
    ],
    "quickstart_repeat.py": [r"Win calls confirmed by every other run: \d+ of \d+"],
    "quickstart_time.py": [r"^quickstart wall time: HEAD ([\d.]+) s, now ([\d.]+) s .*; ratio ([\d.]+)"],
    "regressions_eval.py": [r"^  step\s+5%: recall", r"^  pair 1: "],
    "report.py": [
        r"^report --optimal-hardware\s+: in-process",
        r"^full command benchdb check\s+: median",
        r"^benchdb report --optimal-hardware: answered from the memo / computed = ([\d.]+)x",
        r"^benchdb check: answered from the memo / computed = ([\d.]+)x",
    ],
    "scale.py": [r"^growth against 3,000 samples", r"^report --optimal-hardware\s+([\d.]+)x; ([\d.]+)x\s+([\d.]+)x"],
    "serving_client.py": [
        r"^benchdb\s+1\s+\d+\s+0\s+[\d.]+ ",
        r"^benchdb\s+8\s+\d+\s+0\s+[\d.]+ ",
        r"^guidellm: skipped \(",
    ],
    "serving_workloads.py": [
        r"^multi-turn benchdb\s+16\s+0\s+[\d.]+\s+[\d.]+\s+[+-][\d.]+\s+[\d.]+ ",
        r"^trace\s+benchdb\s+40\s+0\s+[\d.]+\s+[\d.]+\s+[+-][\d.]+\s+[\d.]+ ",
        r"^guidellm: skipped \(",
        r"^aiperf: skipped \(",
    ],
    "spark.py": [
        r"^views\s+[\d.]+\s+([\d.]+)\s+([\d.]+)$",
        r"^report --matrix\s+[\d.]+\s+([\d.]+)\s+([\d.]+)$",
        r"^stats from samples\s+[\d.]+\s+([\d.]+)\s+([\d.]+)$",
    ],
    "startup_tricks.py": [r"^DuckDB import .* saves .*\(([\d.]+)x\)", r"^benchdb report .* saves .*\(([\d.]+)x\)"],
    "time_to_result.py": [
        r"^benchdb / bare loop wall time: ([\d.]+)x",
        r"agreement\): ([\d.]+)",
        r"^optimum-benchmark: skipped \(",
    ],
}


def key_lines(script: str) -> list[str]:
    """What ``script`` must print here: a peer this machine lacks is skipped with a line saying so
    (CI installs Chromium, onnxruntime-web's files and Java, so there the figures are required)."""
    from benchdb.backends import registry
    from benchdb.harness import hardware

    if script == "ortweb.py" and hardware.availability(registry.info("ort-web"))["status"] != "available":
        if have_browser() is None:
            fail_in_ci("Chromium or playwright")
        return [r"^ort-web: skipped \(", r"^tiny:bert\s+wasm: -; native: ok"]
    if script == "spark.py" and not have_java():
        fail_in_ci("Java 17 (for Spark)")
        return [r"^Spark: skipped \("]
    return KEY_LINES[script]


@pytest.mark.core
def test_every_benchmark_script_has_its_small_run():
    """A new script in benchmarks/ gets its --small case here (and so runs in CI)."""
    assert sorted(p.name for p in BENCHMARKS.glob("*.py")) == sorted(KEY_LINES)


#: Scripts that run `benchdb quickstart` (the same exports of the smoke suite's models): they share
#: one benchdb cache in this module, so only the first of them exports (quickstart_time.py's second
#: quickstart always ran on a warm cache); each still runs every step of its own.
SHARED_CACHE = ("quickstart_repeat.py", "quickstart_time.py")


@pytest.fixture(scope="module")
def quickstart_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("quickstart-cache")


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
        TMPDIR=str(tmp_path / "tmp"),
        BENCHDB_CACHE=str(cache or tmp_path / "cache"),
        HOME=str(tmp_path / "home"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    if not assets.missing():
        env["BENCHDB_ORTWEB_DIR"] = str(assets.folder())
    return env


#: Scripts whose key lines need a quiet machine: quantization.py prints a row only for a valid result
#: (its PyTorch int8 row was left out beside another test).
QUIET = {"quantization.py"}


@pytest.fixture
def short_tmp():
    """A folder with a short path for a script's files: Chromium keeps a Unix socket in its profile,
    whose path may not pass 107 bytes, and an xdist worker's tmp_path is longer than pytest's own
    (ortweb.py's Chromium closed at launch there: TargetClosedError)."""
    path = Path(tempfile.mkdtemp(prefix="bdb-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "script", [pytest.param(s, marks=pytest.mark.serial) if s in QUIET else s for s in sorted(KEY_LINES)]
)
def test_small_run(script, short_tmp, request):
    cwd = short_tmp / "cwd"
    cwd.mkdir()
    cache = request.getfixturevalue("quickstart_cache") if script in SHARED_CACHE else None
    if script in SHARED_EXPORTS:
        cache = shared_exports.folder(request.getfixturevalue("tmp_path_factory"))
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
    found = {p: re.search(p, proc.stdout, re.MULTILINE) for p in key_lines(script)}
    missing = [p for p, m in found.items() if m is None]
    assert not missing, f"{script} --small did not print {missing}:\n{out[-4000:]}"
    broken = [m.group(0) for m in found.values() if m and not all(_positive(g) for g in m.groups())]
    assert not broken, f"{script} --small printed a figure that is not a finite number > 0: {broken}"
    assert not any(cwd.iterdir()), f"{script} wrote into its working directory: {sorted(cwd.iterdir())}"


def _positive(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and value > 0


@pytest.mark.core
@pytest.mark.parametrize("script", sorted(p.name for p in (BENCHMARKS / "gpu").glob("*.sh")))
def test_gpu_shell_script_parses(script):
    """benchmarks/gpu/*.sh run on a GPU machine only; here their syntax is checked."""
    bash = shutil.which("bash")
    assert bash is not None
    proc = subprocess.run([bash, "-n", str(BENCHMARKS / "gpu" / script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


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
