"""Shared helpers: real contract files written through the contract module, real DuckDB files."""

from __future__ import annotations

import atexit
import functools
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from support import serial_lock

from benchdb.schema import contract

REPO = Path(__file__).resolve().parents[1]

# Answers kept by `report` and `check` (benchdb.store.memo) go to a folder of this test session, never the
# user's cache; commands started by tests inherit it.
os.environ["BENCHDB_ANSWERS_DIR"] = tempfile.mkdtemp(prefix="benchdb-answers-")
# Each pytest process (each xdist worker too) makes its own, so each removes its own when it ends.
atexit.register(shutil.rmtree, os.environ["BENCHDB_ANSWERS_DIR"], ignore_errors=True)
os.environ.pop("BENCHDB_NO_CACHE", None)
# Terminal output fits $COLUMNS, else the terminal's width (benchdb.reports.fit): the suite reads the
# width a pipe gets (120), whatever terminal, or xdist worker, started it. A test of another width sets it.
os.environ["COLUMNS"] = "120"
# The JVMs the suite starts (Spark's local[2], on an xdist worker's one CPU) live for one module at
# most: the C1 compiler alone warms their code up for a fraction of the CPU that C2 takes, and the
# serial collector needs no GC threads. Back to back on one CPU: session start 9.1 -> 5.1 s, the
# registration of every view 17.7 -> 11.8 s, a SELECT * of each of the 22 views 49 -> 34 s. With C1
# alone the JVM reserves a smaller code cache, which every report query in one session filled ("Out of
# space in CodeCache"): it is reserved at the size tiered compilation gets.
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=240m")

HARDWARE = {
    "kind": "cpu",
    "vendor": "TestVendor",
    "device_name": "Test CPU 9000",
    "cpu_model": "Test CPU 9000",
    "cores_physical": 2,
    "cores_logical": 4,
    "memory_bytes": 16 * 2**30,
    "arch": "x86_64",
}


#: Set by .ci/run: there every extra, Chromium, playwright and Java are installed, so a test that needs
#: one of them and finds it missing fails (:func:`need_module`, :func:`need_chromium`,
#: :func:`need_browser`, :func:`need_java`); elsewhere it is skipped with a line saying what is missing.
CI = os.environ.get("CI") == "true"
#: Set by .ci/floors, which runs the core tests on the core dependencies alone: there an extra is
#: missing by design, so a test that needs one is skipped even under CI=true.
CORE_ONLY = os.environ.get("BENCHDB_CORE_ONLY") == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test marked ``serial`` runs alone under pytest-xdist (tests/support/serial_lock.py), on every
    CPU; one marked ``all_cpus`` beside others, on every CPU; any other test on its worker's own CPU
    (serial_lock.pinned)."""
    serial = item.get_closest_marker("serial") is not None
    with serial_lock.held(serial), serial_lock.pinned(not serial and not item.get_closest_marker("all_cpus")):
        yield


def pytest_configure(config):
    # a serial test runs again where its measurement failed (serial_lock.Retries), inside the lock above
    config.pluginmanager.register(serial_lock.Retries(), "benchdb-serial-retries")


def pytest_xdist_make_scheduler(config, log):
    """Under xdist, the tests of a module with a module-scoped fixture run on one worker, so the
    fixture (a warehouse, an export, a Spark session, a quickstart) is built once, not once a worker;
    every other test goes wherever a worker is free. (xdist's own ``--dist loadgroup`` marks no
    group on pytest 9, which no longer reads the node id it rewrites.)"""
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath
    # the work goes out in the order pytest_collection_modifyitems put it in, heaviest first, not
    # xdist's order (most tests per scope first: a module of forty 10 ms tests before Spark's six)
    config.option.loadscopereorder = False

    class ModuleFixturesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(root, nodeid)

    return ModuleFixturesTogether(config, log)


def _scope(root: Path, nodeid: str) -> str:
    """What the xdist scheduler sends to one worker: the test's module, where a module fixture is
    built once for all its tests, else the test alone."""
    module = nodeid.split("::", 1)[0]
    return module if _has_module_fixture(root / module) else nodeid


def pytest_collection_modifyitems(config, items):
    """Under xdist, the tests that run alone first, then the heaviest work: a worker that starts a long
    module last keeps the run going while the other has nothing left, and a serial test waits for
    whatever the other worker is running. A scope's weight is its tests, a slow one counting thirty.
    (Each worker collects and sorts the same, so their collections agree; a module's tests keep
    their order.)"""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    scopes = {item.nodeid: _scope(config.rootpath, item.nodeid) for item in items}
    weight: dict[str, int] = {}
    for item in items:
        w = 30 if item.get_closest_marker("slow") else 1
        w += 10**6 if item.get_closest_marker("serial") else 0
        weight[scopes[item.nodeid]] = weight.get(scopes[item.nodeid], 0) + w
    items.sort(key=lambda item: -weight[scopes[item.nodeid]])


@functools.cache
def _has_module_fixture(path: Path) -> bool:
    """The module defines a module-scoped fixture or uses conftest's (read from its source: the
    scheduler runs where nothing is collected)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return 'scope="module"' in text or "export_cache" in text


def fail_in_ci(what: str) -> None:
    """Under CI=true, fail the test: ``what`` is missing where CI provides it. Elsewhere nothing."""
    if CI:
        pytest.fail(
            f"{what} is missing, and CI=true: .ci/run installs it, so this is a failure, not a skip", pytrace=False
        )


def need(present: bool, what: str) -> None:
    """Where ``present`` is false, ``what`` is missing: the test fails under CI=true (.ci/run provides
    it) and is skipped elsewhere. In a test or at a test module's top."""
    if not present:
        fail_in_ci(what)
        pytest.skip(f"{what} is missing here (CI installs it: see .ci/run)", allow_module_level=True)


def need_module(name: str, extra: str) -> ModuleType:
    """``name`` imported (a module one of benchdb's extras, or the test extra, installs: httpx,
    pyspark, fsspec, torch, ...), in a test or at a test module's top. Where it is missing the test
    fails under CI=true, which installs every extra (.ci/run), and is skipped elsewhere, and in the
    floors' core-only run. ``extra`` says what installs it, for the line a user reads. The only way
    the tests skip on a missing import (tests/guarantees/test_layout.py refuses
    ``pytest.importorskip`` and ``find_spec`` elsewhere)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        what = f"{name} ({extra})"
        if CORE_ONLY:
            pytest.skip(f"{what} is not a core dependency: the core-only run skips it", allow_module_level=True)
        need(False, what)
        raise  # need(False, ...) fails or skips


def have_module(name: str) -> bool:
    """Whether ``name`` can be imported here, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False


def only_on_linux(why: str) -> pytest.MarkDecorator:
    """Mark a test (or a module, as ``pytestmark``) that reads something only Linux has: skipped on
    other systems, with ``why``; not a missing dependency, so skipped under CI=true too."""
    return pytest.mark.skipif(not sys.platform.startswith("linux"), reason=f"needs Linux: {why}")


def have_chromium() -> str | None:
    """The Chromium benchdb's browser code would use (benchdb.backends.ortweb.browser.find), or None."""
    from benchdb.backends.ortweb import browser

    return browser.find()


def have_browser() -> str | None:
    """Chromium, when playwright is installed too (what drives it), or None."""
    return have_chromium() if have_module("playwright") else None


def have_java() -> bool:
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


def need_chromium() -> str:
    """Chromium's path; where it is missing, the test fails under CI=true and is skipped elsewhere."""
    path = have_chromium()
    need(path is not None, "Chromium")
    assert path is not None
    return path


def need_browser() -> str:
    """Chromium's path, with playwright installed; where either is missing, the test fails under
    CI=true and is skipped elsewhere."""
    path = have_browser()
    need(path is not None, "Chromium or playwright")
    assert path is not None
    return path


def need_java() -> None:
    """Java (for Spark); where it is missing, the test fails under CI=true and is skipped elsewhere."""
    need(have_java(), "Java 17 (for Spark: apt-get install openjdk-17-jre-headless)")


@pytest.fixture(scope="session")
def browser_needed() -> str:
    """``pytest.mark.usefixtures("browser_needed")``: :func:`need_browser` before anything else the
    test needs is built."""
    return need_browser()


@pytest.fixture(scope="session")
def java_needed() -> None:
    """``pytest.mark.usefixtures("java_needed")``: :func:`need_java` before the test's other fixtures."""
    need_java()


def make_run(run_id: str | None = None, started_at: str = "2026-11-01T10:00:00+00:00", **extra) -> dict:
    return {
        "run_id": run_id or contract.new_run_id(),
        "started_at": started_at,
        "host": "testhost",
        "benchdb_version": "0.1.0",
        "git_commit": None,
        "software": {"numpy": np.__version__},
        "config": {},
        "tags": [],
        **extra,
    }


def make_meta(
    run: dict,
    *,
    model_id: str = "matmul:64",
    batch_size: int = 1,
    status: str = "ok",
    hardware: dict | None = None,
    backend: str = "numpy",
    device: str = "cpu",
    mode: str = "eager",
    precision: str = "fp32",
    input_shape: str = "n=64",
    validity: str = "valid",
    error: str | None = None,
    model: dict | None = None,
    options: dict | None = None,
) -> dict:
    return contract.build_metadata(
        run=run,
        hardware=hardware or HARDWARE,
        model=model or {"model_id": model_id, "family": "synthetic"},
        scenario={
            "model_id": model_id,
            "backend": backend,
            "device": device,
            "mode": mode,
            "precision": precision,
            "batch_size": batch_size,
            "input_shape": input_shape,
            "status": status,
            "error": error,
            "validity": validity,
            "validity_reasons": [],
            "primary_metric": "latency_s",
            "timing_method": "host_clock",
            "threads": 1,
            "options": {"threads": 1} if options is None else options,
        },
    )


def write_file(
    folder: Path,
    meta: dict,
    values=None,
    name: str | None = None,
    metric: str = "latency_s",
    unit: str = "s",
    repeats: int = 1,
) -> Path:
    """Write one contract file with the given latency values (default: 50 values around 1 ms).
    ``repeats`` K: the values are dealt round-robin to K processes (the ``repeat`` column)."""
    if values is None:
        values = np.random.default_rng(meta["scenario"]["batch_size"]).normal(1e-3, 1e-5, 50)
    if repeats > 1:
        meta = {**meta, "scenario": {**meta["scenario"], "repeats": repeats}}
    rows = [(metric, unit, i // repeats, i * 1e-3, float(v), i % repeats) for i, v in enumerate(values)]
    table = contract.samples_table(meta, rows)
    name = name or f"{meta['scenario']['scenario_id'][:12]}.parquet"
    return contract.write_scenario(folder / name, meta, table)


#: A loose stopping rule for the backend tests' tiny models: quick, and a target wide enough that
#: noise never makes one invalid.
QUICK_RUN = ["--min-time", "0.05", "--max-time", "1", "--warmup", "1", "--min-iters", "10", "--target-ci", "0.5"]
QUICK_RUN += ["--max-background-cpu", "100%"]


def sample_count(db: Path, where: str = "") -> int:
    """The warehouse's samples (``where``: a WHERE clause), read as an analyst reads them."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"SELECT count(*) FROM samples {where}").fetchall()[0][0]
    finally:
        con.close()


def write_suite(folder: Path, n_files: int = 3, n_values: int = 50, run: dict | None = None) -> list[Path]:
    run = run or make_run()
    rng = np.random.default_rng(7)
    return [
        write_file(folder, make_meta(run, batch_size=bs), rng.normal(1e-3 * bs, 1e-5, n_values))
        for bs in range(1, n_files + 1)
    ]


def benchdb_cmd(
    *args: str, check: bool = False, env: dict | None = None, cwd=None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run the real command line in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "benchdb", *args], capture_output=True, text=True, env=full_env, cwd=cwd, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"benchdb {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def cli(*args):
    """The command line in this process (click's runner): quicker than a subprocess."""
    from click.testing import CliRunner

    from benchdb.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def import_and_ingest(tmp_path: Path, fmt: str, *paths, extra=()) -> Path:
    """`benchdb import FMT PATHS --out tmp/imported` then `benchdb ingest` into tmp/bench.duckdb."""
    out, db = tmp_path / "imported", tmp_path / "bench.duckdb"
    r = cli("import", fmt, *paths, "--out", out, *extra)
    assert r.exit_code == 0, r.output
    assert f"next: benchdb ingest {out}" in r.output
    r = cli("ingest", out, "--db", db)
    assert r.exit_code == 0, r.output
    return db


def ingest_fixture(folder: Path, db: Path, files: int) -> Path:
    """`benchdb ingest` of a recorded fixture folder, all ``files`` of it loaded and none rejected."""
    r = cli("ingest", folder, "--db", db)
    assert r.exit_code == 0, r.output
    assert f"ingested {files} new file(s)" in r.output and "rejected 0" in r.output
    return db


def _signals_at_default() -> None:
    """``preexec_fn`` of :func:`child`: SIGINT and SIGTERM at their defaults even where pytest was
    started with them ignored (a background ``&`` job, ``nohup``), since an ignored signal stays
    ignored across exec and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def child(args: list, **popen) -> Iterator[subprocess.Popen]:
    """Every process a test starts and leaves running (a server, a reader holding a file, a command
    it signals) is started here: with SIGINT and SIGTERM at their defaults however pytest was
    started, in a session of its own, and ended with its whole process group (SIGKILL) when the
    ``with`` block ends, whatever the test's outcome: a failed test never leaves a child scanning
    for minutes and slowing every test after it. tests/guarantees/test_layout.py keeps
    ``subprocess.Popen`` out of every other test module."""
    proc = subprocess.Popen(args, start_new_session=True, preexec_fn=_signals_at_default, **popen)
    try:
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the group outlives its leader: its children too
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def ctrl_c_in_this_process():
    """Ctrl-C raises KeyboardInterrupt in this process for the test's duration, as in a terminal,
    even where pytest was started with SIGINT ignored; the previous disposition is restored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def interrupt_after_first_file(args: list[str], out: Path) -> str:
    """`python -m benchdb ARGS` (which writes into ``out``) sent Ctrl-C once its first file exists;
    it must exit 130. Its standard error."""
    import time

    with child(
        [sys.executable, "-m", "benchdb", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        deadline = time.monotonic() + 120
        while not list(out.rglob("*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    return err


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(url: str, proc: subprocess.Popen, tries: int = 300) -> None:
    """Until ``url`` answers (every 0.1 s, ``tries`` times); the server's stderr if it exits first."""
    import time
    import urllib.request

    for _ in range(tries):
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


def db_rows(db, query: str, params=None) -> list[dict]:
    """A read-only query's rows as dicts."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute(query, params or [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()


def result_metric(db, model_id: str, name: str, **where) -> dict:
    """The one ``result_metrics`` row of metric ``name`` of the result of ``model_id`` (and the
    results columns given as ``where``): what benchdb computed from an imported result's samples."""
    extra = "".join(f" AND r.{k} = ${k}" for k in where)
    got = db_rows(
        db,
        "SELECT m.* FROM result_metrics m JOIN results r USING (result_id) "
        f"WHERE r.model_id = $model AND m.metric = $metric{extra}",
        {"model": model_id, "metric": name, **where},
    )
    assert len(got) == 1, (model_id, name, got)
    return got[0]


@pytest.fixture(scope="module")
def export_cache(tmp_path_factory):
    """A module's own $BENCHDB_CACHE (exports and quantized models), restored afterwards."""
    path = tmp_path_factory.mktemp("export-cache")
    old = os.environ.get("BENCHDB_CACHE")
    os.environ["BENCHDB_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("BENCHDB_CACHE", None)
    else:
        os.environ["BENCHDB_CACHE"] = old


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    d = tmp_path / "results"
    d.mkdir()
    return d


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "bench.duckdb"


class FakeClock:
    """For the timing loop's logic (never for figures a user sees): each call to fn() advances
    time by the next duration from a script; no sleeps."""

    def __init__(self, durations):
        self.t = 0.0
        self.durations = iter(durations)
        self.calls = 0

    def clock(self):
        return self.t

    def fn(self):
        self.calls += 1
        self.t += next(self.durations)


@pytest.fixture
def hub():
    """A fake Hugging Face Hub on a local port (tests/support/fakehub.py)."""
    from support.fakehub import FakeHub

    with FakeHub() as h:
        yield h


@pytest.fixture
def hub_env(hub, tmp_path):
    """The environment of a user with a write token, the fake Hub, and a Hub cache of their own."""
    from support.fakehub import WRITE

    home = tmp_path / "hf-home"
    home.mkdir()
    return {
        "HF_ENDPOINT": hub.url,
        "HF_TOKEN": WRITE,
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_XET": "1",
    }


def one_error_line(proc: subprocess.CompletedProcess, code: int = 1) -> str:
    """The one ``benchdb: error:`` line a refused input gives: exit ``code``, no traceback."""
    assert proc.returncode == code and "Traceback" not in proc.stderr, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("benchdb: error:")]
    return line


#: The module benchdb.startup takes DuckDB from: its engine alone (duckdb >= 2: the top-level
#: extension `_duckdb`), else the whole package (duckdb 1.x builds the extension into it).
ENGINE = importlib.import_module("benchdb.startup").duckdb.__name__.split(".")[0]
STARTUP_PROBE = (
    "import runpy, sys, json\n"
    "sys.argv = ['benchdb'] + json.loads(sys.argv[1])\n"
    "try:\n"
    "    runpy.run_module('benchdb', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "print('\\nMODULES=' + json.dumps(sorted(m.split('.')[0] for m in sys.modules)))\n"
)


def imported_modules(*args: str) -> set[str]:
    """The top-level modules `benchdb ARGS` imported (tests/test_startup.py)."""
    out = subprocess.run(
        [sys.executable, "-c", STARTUP_PROBE, json.dumps(list(args))], capture_output=True, text=True, timeout=120
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("MODULES=")]
    assert line, out.stderr
    return set(json.loads(line[-1].removeprefix("MODULES=")))


#: A kernel layer for the tiny LLaMA's RMSNorm: the same RMSNorm, appending to the file CALLS each
#: time it runs (the proof that it replaced the layer).
KERNEL = """import torch
from torch import nn

CALLS = {calls!r}


class RMSNorm(nn.Module):
    can_torch_compile = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        with open(CALLS, "a") as fh:
            fh.write("x")
        dtype = hidden_states.dtype
        x = hidden_states.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * x.to(dtype)
"""


def kernel_repo(root: Path, calls: Path, note: str = "", compiles: bool = True) -> Path:
    """A local kernel repository in the layout the kernels library loads (build/<variant>/ with
    metadata.json and the package), a noarch CPU build; ``compiles``: it declares torch.compile support."""
    variant = root / "build" / "torch-cpu"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(
        json.dumps(
            {
                "name": "bench-rmsnorm",
                "id": f"_bench_rmsnorm_{root.name.replace('-', '_')}",
                "version": 1,
                "license": "Apache-2.0",
                "backend": {"type": "cpu"},
                "python-depends": [],
            }
        )
    )
    (variant / "__init__.py").write_text("from . import layers\n")
    code = KERNEL.format(calls=str(calls)) + note
    (variant / "layers.py").write_text(code if compiles else code.replace("    can_torch_compile = True\n", ""))
    return root
