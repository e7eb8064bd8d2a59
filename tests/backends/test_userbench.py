"""User benchmarks (`benchdb run --bench`): discovery, parameters as scenario axes, declared
environment in the identity, real runs in child processes, failures, and third-party backends
added through the `benchdb.backends` entry-point group (a real distribution installed in tmp)."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner
from conftest import REPO
from support.user_benches import bench_folder, write

from benchdb import bench
from benchdb.backends import registry
from benchdb.backends.userbench import backend as userbench
from benchdb.backends.userbench import discovery
from benchdb.cli import main
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule
from benchdb.schema import identity

FAST = ["--warmup", "1", "--min-iters", "5", "--min-time", "0.01", "--max-time", "0.1", "--max-background-cpu", "100%"]
RULE = StopRule(warmup_iters=1, warmup_s=0.0, min_iters=5, min_time_s=0.01, max_time_s=0.1)
EXAMPLE = REPO / "examples" / "benches" / "bench_example.py"


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


def opts(*models, **kw) -> RunOptions:
    return RunOptions(backend="userbench", models=tuple(str(m) for m in models), threads=1, rule=RULE, **kw)


def keys(plan):
    return [(sc.model_id, sc.mode, sc.precision, sc.batch_size, sc.input_shape) for _, scs in plan for sc in scs]


@pytest.fixture
def benches(tmp_path):
    """A folder of bench files: two found by name, one explicit-only, hidden and tool folders."""
    return bench_folder(tmp_path)


def test_params_become_scenarios(benches):
    plan = userbench.plan(opts(benches))
    assert [model.rsplit("/", 1)[-1] for model, _ in plan] == [
        "bench_a.py::bench_zeta",
        "bench_a.py::bench_alpha",
        "bench_b.py::bench_b",
    ]
    assert keys(plan) == [
        ("bench_a::bench_zeta", "eager", "fp32", 1, "n=64"),
        ("bench_a::bench_zeta", "eager", "fp32", 4, "n=64"),
        ("bench_a::bench_zeta", "eager", "fp32", 1, "n=128"),
        ("bench_a::bench_zeta", "eager", "fp32", 4, "n=128"),
        ("bench_a::bench_alpha", "eager", "na", 1, ""),
        ("bench_b::bench_b", "eager", "bf16", 1, "k=3,mode=x"),  # other params sorted, as k=v
    ]
    sc = plan[0][1][1]
    assert sc.backend == "userbench" and sc.device == "cpu"
    assert sc.options == {"threads": 1}  # no ENV declared
    assert sc.settings["params"] == {"n": "64", "dtype": "float32", "batch_size": "4"}
    # --batch-sizes / --precision / --mode are not axes of a user bench: its params are
    assert keys(userbench.plan(opts(benches, batch_sizes=(2, 8), precisions=("fp16",), modes=("compile",)))) == keys(
        plan
    )


def test_precision_names_and_stacked_params():
    assert [userbench.precision_of(v) for v in ("float32", "float16", "bfloat16", "float64", "int8")] == [
        "fp32",
        "fp16",
        "bf16",
        "fp64",
        "int8",
    ]
    import numpy as np

    assert userbench.precision_of(np.float16) == "fp16" and userbench.precision_of(np.dtype("float64")) == "fp64"

    @bench.params(a=[1, 2])
    @bench.params(b=["x"])
    def f(a, b):
        return None

    assert userbench.combinations(f, "f") == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    with pytest.raises(ValueError, match="declares 'a' twice"):
        bench.params(a=[3])(f)
    with pytest.raises(TypeError, match=r"takes a list of values, e\.g\. n=\[64\]"):
        bench.params(n=64)
    with pytest.raises(ValueError, match="has no values"):
        bench.params(n=[])


def test_declared_environment_is_part_of_the_identity(tmp_path, monkeypatch):
    scaled = write(
        tmp_path / "bench_scaled.py",
        """
        import os
        ENV = ["BENCH_SCALE", "BENCH_UNSET"]

        def bench_loop():
            return sum(range(int(1000 * float(os.environ.get("BENCH_SCALE", "1")))))
    """,
    )
    plain = write(tmp_path / "bench_plain.py", "def bench_loop():\n    return 1\n")
    monkeypatch.delenv("BENCH_UNSET", raising=False)

    def scenario(path, scale):
        monkeypatch.setenv("BENCH_SCALE", scale)
        [(_, [sc])] = userbench.plan(opts(path))
        return sc

    one, two = scenario(scaled, "1"), scenario(scaled, "2")
    assert one.options == {"threads": 1, "env": '{"BENCH_SCALE":"1","BENCH_UNSET":null}'}
    assert json.loads(two.options["env"]) == {"BENCH_SCALE": "2", "BENCH_UNSET": None}
    assert identity.options_id(one.options) != identity.options_id(two.options)
    assert identity.scenario_id("run", one.key()) != identity.scenario_id("run", two.key())
    assert identity.series_id(one.key(), "hw") != identity.series_id(two.key(), "hw")
    # an environment the bench does not declare is not part of its identity
    assert scenario(plain, "1").key() == scenario(plain, "2").key()
    # and threads are
    [(_, [four])] = userbench.plan(RunOptions(backend="userbench", models=(str(plain),), threads=4))
    assert four.options == {"threads": 4}


def test_set_up_is_not_timed_only_the_returned_callable_is(tmp_path):
    path = write(
        tmp_path / "bench_calls.py",
        """
        CALLS = {"setup": 0, "timed": 0, "plain": 0}

        def bench_with_setup():
            CALLS["setup"] += 1
            def run():
                CALLS["timed"] += 1
            return run

        def bench_plain():
            CALLS["plain"] += 1
    """,
    )
    [(setup_model, setup_scs), (plain_model, plain_scs)] = userbench.plan(opts(path))
    [with_setup] = list(userbench.run_model(setup_model, setup_scs, opts(path)))
    [plain] = list(userbench.run_model(plain_model, plain_scs, opts(path)))
    calls = discovery.load_module(path).CALLS
    for o in (with_setup, plain):
        assert o.status == "ok", o.error
    metrics = {o.extra["timed"]: {r[0] for r in o.rows} for o in (with_setup, plain)}
    assert metrics == {
        "returned_callable": {"latency_s", "first_call_s", "setup_s"},
        "call": {"latency_s", "first_call_s"},
    }  # load_s: only where the file was imported
    n_setup = sum(r[0] == "latency_s" for r in with_setup.rows)
    n_plain = sum(r[0] == "latency_s" for r in plain.rows)
    # set-up once; then the returned callable only: first call + warm-up (warmup_s 0) + samples
    assert calls["setup"] == 1
    assert calls["timed"] == 1 + RULE.warmup_iters + n_setup
    # a plain bench: every call is the whole function; its very first call is first_call_s, and
    # the timing loop's own first call becomes one more warm-up call
    assert calls["plain"] == 2 + RULE.warmup_iters + n_plain


def test_run_through_the_cli_writes_files_that_ingest_loads(tmp_path, benches):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    r = invoke(
        "run",
        "--bench",
        str(EXAMPLE),
        "--bench",
        f"{benches / 'sub' / 'bench_b.py'}::bench_b",
        "--threads",
        "1",
        "--out",
        str(out),
        *FAST,
        env={"BENCH_SCALE": "0.5"},
    )
    assert r.exit_code == 0, r.output
    assert "[6/6] bench_b::bench_b userbench/cpu eager bf16 bs=1 k=3,mode=x threads=1" in r.stderr
    assert r.stdout.splitlines()[-1].endswith(" 6 files in " + str(next(out.iterdir())))
    assert len(list(out.rglob("*.parquet"))) == 6

    r = invoke("ingest", str(out), "--db", str(db))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("ingested 6 new file(s), skipped 0 already loaded, rejected 0; ")
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT model_id, backend, mode, precision, batch_size, input_shape, status, "
            "CAST(options AS VARCHAR) FROM results ORDER BY model_id, precision, input_shape"
        ).fetchall()
        metrics = con.execute(
            "SELECT DISTINCT m.metric FROM result_metrics m JOIN results r USING (result_id) "
            "WHERE r.model_id = 'bench_example::bench_numpy_matmul' ORDER BY 1"
        ).fetchall()
        revision = con.execute(
            "SELECT DISTINCT revision FROM architectures WHERE model_id = 'bench_example::bench_python_loop'"
        ).fetchall()
    env = json.dumps({"env": '{"BENCH_SCALE":"0.5"}', "threads": 1}, separators=(",", ":"))
    assert [row[:7] for row in rows] == [
        ("bench_b::bench_b", "userbench", "eager", "bf16", 1, "k=3,mode=x", "ok"),
        ("bench_example::bench_numpy_matmul", "userbench", "eager", "fp32", 1, "n=128", "ok"),
        ("bench_example::bench_numpy_matmul", "userbench", "eager", "fp32", 1, "n=64", "ok"),
        ("bench_example::bench_numpy_matmul", "userbench", "eager", "fp64", 1, "n=128", "ok"),
        ("bench_example::bench_numpy_matmul", "userbench", "eager", "fp64", 1, "n=64", "ok"),
        ("bench_example::bench_python_loop", "userbench", "eager", "na", 1, "n=20000", "ok"),
    ]
    assert [json.loads(row[7]) for row in rows[1:]] == [json.loads(env)] * 5
    assert json.loads(rows[0][7]) == {"threads": 1}
    assert metrics == [("first_call_s",), ("latency_s",), ("load_s",), ("setup_s",)]
    assert revision and len(revision[0][0]) == 16  # the bench file's content hash


def test_config_file_names_benches_as_userbench_models(tmp_path, benches):
    cfg = write(
        tmp_path / "bench.yaml",
        f"""
        runs:
          - backends: [userbench]
            models: ["{benches / "sub"}"]
    """,
    )
    r = invoke("run", "--config", str(cfg), "--dry-run")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0].startswith("bench_b::bench_b userbench/cpu eager bf16 bs=1 k=3,mode=x threads=")
    assert r.stdout.splitlines()[-1] == "1 scenario"
    r = invoke("run", "--backend", "userbench", "--model", str(benches / "other.py"), "--dry-run")
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == "1 scenario", r.output


def test_a_bench_that_raises_is_recorded_as_failed_and_the_run_goes_on(tmp_path):
    path = write(
        tmp_path / "bench_fail.py",
        """
        from benchdb import bench

        def bench_ok():
            return sum(range(100))

        @bench.params(where=["setup", "call"])
        def bench_boom(where):
            if where == "setup":
                raise ValueError("no data for this size")
            def run():
                raise RuntimeError("kaboom")
            return run

        def bench_exits():
            import os
            os._exit(7)
    """,
    )
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    r = invoke("run", "--bench", str(path), "--out", str(out), *FAST)
    assert r.exit_code == 0, r.output  # one scenario succeeded: partial failures exit 0
    assert len(list(out.rglob("*.parquet"))) == 4
    r = invoke("ingest", str(out), "--db", str(db))
    assert r.exit_code == 0, r.output
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT model_id, input_shape, status, error FROM results ORDER BY model_id, input_shape"
        ).fetchall()
    assert rows == [
        ("bench_fail::bench_boom", "where=call", "failed", "RuntimeError: kaboom (at bench_fail.py:12)"),
        ("bench_fail::bench_boom", "where=setup", "failed", "ValueError: no data for this size (at bench_fail.py:10)"),
        ("bench_fail::bench_exits", "", "failed", "child process exited with code 7"),
        ("bench_fail::bench_ok", "", "ok", None),
    ]


def test_a_run_where_every_bench_fails_exits_3(tmp_path):
    path = write(tmp_path / "bench_bad.py", "def bench_bad():\n    raise KeyError('x')\n")
    r = invoke("run", "--bench", str(path), "--out", str(tmp_path / "res"), *FAST)
    assert r.exit_code == 3
    assert "KeyError: 'x' (at bench_bad.py:2)" in r.stdout


@pytest.mark.parametrize(
    "make,args,line",
    [
        (None, ["--bench", "{tmp}/nope.py"], "bench path {tmp}/nope.py does not exist"),
        (
            "empty",
            ["--bench", "{tmp}/bench_empty.py"],
            "bench file {tmp}/bench_empty.py has no benches; define functions named bench_*",
        ),
        (
            "empty",
            ["--bench", "{tmp}"],
            "bench file {tmp}/bench_empty.py has no benches; define functions named bench_*",
        ),
        ("folder", ["--bench", "{tmp}/d"], "bench folder {tmp}/d has no bench_*.py files"),
        ("text", ["--bench", "{tmp}/notes.txt"], "bench file {tmp}/notes.txt is not a .py file"),
        (
            "one",
            ["--bench", "{tmp}/bench_one.py::bench_two"],
            "bench file {tmp}/bench_one.py has no bench 'bench_two'; it has bench_one",
        ),
        (
            "syntax",
            ["--bench", "{tmp}/bench_syntax.py"],
            "bench file {tmp}/bench_syntax.py could not be imported: SyntaxError: invalid syntax (line 1)",
        ),
        (
            "imports",
            ["--bench", "{tmp}/bench_imports.py"],
            "bench file {tmp}/bench_imports.py could not be imported: ModuleNotFoundError: No module named "
            "'no_such_module_benchdb' (at bench_imports.py:1)",
        ),
        (
            "signature",
            ["--bench", "{tmp}/bench_sig.py"],
            "bench bench_sig::bench_sig: its parameters n do not fit its signature bench_sig(): "
            "got an unexpected keyword argument 'n'",
        ),
        (
            "batch",
            ["--bench", "{tmp}/bench_batch.py"],
            "bench bench_batch::bench_batch: batch_size must be a positive integer, found 0",
        ),
        (
            "env",
            ["--bench", "{tmp}/bench_env.py"],
            "bench file {tmp}/bench_env.py: ENV must be a list of environment variable names, e.g. ENV = "
            '["BENCH_SCALE"]',
        ),
        (
            "one",
            ["--bench", "{tmp}/bench_one.py", "--backend", "numpy"],
            "--bench runs backend userbench; leave out --backend numpy",
        ),
        (
            "one",
            ["--bench", "{tmp}/bench_one.py", "--suite", "smoke"],
            "give --bench or --config/--suite, not both; a config file names benches as models of backend userbench",
        ),
    ],
)
def test_user_errors_are_one_line(tmp_path, make, args, line):
    files = {
        "empty": {"bench_empty.py": "X = 1\n"},
        "folder": {"d/other.py": "def bench_x():\n    pass\n"},
        "text": {"notes.txt": "hi"},
        "one": {"bench_one.py": "def bench_one():\n    pass\n"},
        "syntax": {"bench_syntax.py": "def bench_(:\n"},
        "imports": {"bench_imports.py": "import no_such_module_benchdb\n"},
        "signature": {"bench_sig.py": "from benchdb import bench\n@bench.params(n=[1])\ndef bench_sig():\n    pass\n"},
        "batch": {
            "bench_batch.py": "from benchdb import bench\n@bench.params(batch_size=[0])\n"
            "def bench_batch(batch_size):\n    pass\n"
        },
        "env": {"bench_env.py": "ENV = 'BENCH_SCALE'\ndef bench_e():\n    pass\n"},
    }
    for name, text in files.get(make, {}).items():
        write(tmp_path / name, text)
    r = invoke("run", *[a.format(tmp=tmp_path) for a in args], "--out", str(tmp_path / "o"))
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == "benchdb: error: " + line.format(tmp=tmp_path)
    assert not (tmp_path / "o").exists()


def test_userbench_is_a_builtin_backend_that_needs_no_library():
    assert registry.info("userbench").implementation == "benchdb.backends.userbench.backend"
    assert registry.load("userbench") is userbench
    code = "import sys, benchdb.bench; print(sorted(m for m in ('numpy', 'duckdb', 'pyarrow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # a bench file's import of benchdb.bench is light


def test_the_docs_show_the_example_file():
    section = (REPO / "docs" / "guides" / "user-benches.md").read_text()
    shown = section.split("# examples/benches/bench_example.py (docstring left out)\n", 1)[1].split("```", 1)[0]
    text = EXAMPLE.read_text()
    assert text.split('"""', 2)[2].lstrip("\n") == shown
    assert [n for _, n in discovery.discover(str(EXAMPLE.parent))] == ["bench_python_loop", "bench_numpy_matmul"]
