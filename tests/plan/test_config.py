"""Config files, suites, variants, sharding, skip-fresh and remote outputs (quickstart: tests/cli/test_start.py)."""

import json

import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.plan import config as cfgmod

FAST = {"warmup": 1, "min_iters": 10, "min_time": 0.05, "max_time": 1, "target_ci": 0.5, "max_background_cpu": "100%"}


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


def write(tmp_path, text, name="bench.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


GOOD = """
description: two matmul sizes
settings: {warmup: 1, min_iters: 10, min_time: 0.05, max_time: 1, target_ci: 0.5, out: "${OUT_DIR}", tags: [nightly]}
runs:
  - backends: numpy
    models: [matmul:16, matmul:32]
    batch_sizes: [1, 2, 4]
exclude:
  - {model: matmul:32, batch_size: 4}
"""


def test_good_yaml_and_json_configs(tmp_path, monkeypatch):
    monkeypatch.setenv("OUT_DIR", str(tmp_path / "out"))
    cfg = cfgmod.load(write(tmp_path, GOOD))
    (opts,) = cfg.runs
    assert (opts.backend, opts.models, opts.batch_sizes) == ("numpy", ("matmul:16", "matmul:32"), (1, 2, 4))
    assert opts.out == str(tmp_path / "out") and opts.tags == ("nightly",)
    assert (opts.rule.min_time_s, opts.rule.max_time_s, opts.rule.min_iters) == (0.05, 1.0, 10)
    assert cfg.exclude == [{"model": "matmul:32", "batch_size": 4}]
    data = {"runs": [{"backends": ["numpy"], "models": "matmul:8", "devices": ["cpu"]}], "settings": {"threads": 1}}
    cfg = cfgmod.load(write(tmp_path, json.dumps(data), "b.json"))
    assert cfg.runs[0].threads == 1 and cfg.runs[0].models == ("matmul:8",)


@pytest.mark.parametrize(
    "text,message",
    [
        ("runs: []", "'runs' must be a non-empty list of run entries"),
        ("runz: []", "unknown key 'runz' (did you mean 'runs'?); allowed: description, exclude, runs, settings"),
        ("settings: {speed: 3}\nruns: [{backends: numpy, models: matmul:8}]", "unknown setting 'speed'; allowed: "),
        ("runs: [{backends: numpy, models: matmul:8, colour: red}]", "runs[0]: unknown key 'colour'; allowed: "),
        (
            "runs: [{backends: numpy, models: matmul:8, batch_sizes: [0]}]",
            "config key 'batch_sizes': 0 is not a positive integer",
        ),
        (
            "runs: [{backends: tensorflow, models: x}]",
            "runs[0]: backend 'tensorflow' is not one of numpy, onnxruntime, openai, openvino, ort-web, "
            "pytorch, userbench",
        ),
        ("runs: [{backends: numpy}]", "runs[0]: 'model' is required"),
        (
            "settings: {min_time: fast}\nruns: [{backends: numpy, models: matmul:8}]",
            "config key 'min_time': 'fast' is not like 500ms, 2s, 30m, 12h, 7d",
        ),
        ("runs: [{backends: numpy, models: '${NOPE_NOT_SET}'}]", "environment variable ${NOPE_NOT_SET} is not set"),
        ("exclude: [{colour: red}]\nruns: [{backends: numpy, models: matmul:8}]", "exclude key 'colour' is not one of"),
        ("runs: [{backends: numpy, models: matmul:8\n", "is not valid YAML"),
    ],
)
def test_config_errors_name_the_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(BenchdbError) as err:
        cfgmod.load(path)
    assert message in str(err.value)
    r = invoke("run", "--config", str(path), "--dry-run")
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_variants_expand_with_excludes_and_cli_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("OUT_DIR", str(tmp_path / "out"))
    path = write(tmp_path, GOOD)
    r = invoke("run", "--config", str(path), "--dry-run")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[-1] == "5 scenarios"
    labels = [line.rsplit(" threads=", 1)[0] for line in lines]  # labels end with the thread count
    assert "matmul:32 numpy/cpu eager fp32 bs=4 n=32" not in labels
    assert "matmul:16 numpy/cpu eager fp32 bs=4 n=16" in labels
    r = invoke("run", "--config", str(path), "--dry-run", "--batch-sizes", "8", "--precision", "fp32,fp64")
    assert r.stdout.splitlines()[-1] == "4 scenarios"
    # a real run: the file's settings, the command line's batch size
    r = invoke("run", "--config", str(path), "--batch-sizes", "2", "--no-isolation", "--max-background-cpu", "100%")
    assert r.exit_code == 0, r.output
    assert len(list((tmp_path / "out").rglob("*.parquet"))) == 2


def test_shards_partition_the_plan_exactly():
    full = invoke("run", "--suite", "smoke", "--dry-run").stdout.splitlines()[:-1]
    parts = [
        invoke("run", "--suite", "smoke", "--dry-run", "--shard", f"{i}/3").stdout.splitlines()[:-1] for i in (1, 2, 3)
    ]
    assert sum(len(p) for p in parts) == len(full) == 16
    assert sorted(sum(parts, [])) == sorted(full)
    assert all(set(a).isdisjoint(b) for a in parts for b in parts if a is not b)
    r = invoke("run", "--suite", "smoke", "--dry-run", "--shard", "4/3")
    assert r.exit_code == 2 and "--shard '4/3' must be i/n with 1 <= i <= n" in r.stderr


def test_suites_are_listed_and_parse():
    r = invoke("suites")
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert names == ["audio", "embedding", "key", "multimodal", "small", "smoke", "text_generation", "vision"]
    for name in names:
        assert cfgmod.load_suite(name).runs
    r = invoke("run", "--suite", "nightly")
    assert r.exit_code == 2 and "unknown suite 'nightly'; choose one of audio, embedding" in r.stderr


def test_skip_fresh_and_dry_run_estimate(tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    args = [
        "--backend",
        "numpy",
        "--model",
        "matmul:16",
        "--batch-sizes",
        "1,2",
        "--out",
        str(out),
        "--no-isolation",
        "--min-time",
        "0.05",
        "--max-time",
        "1",
        "--target-ci",
        "0.5",
        "--max-background-cpu",
        "100%",
    ]
    r = invoke("run", *args[:-2], "--batch-sizes", "1")
    assert r.exit_code == 0
    invoke("ingest", str(out), "--db", str(db))
    r = invoke("run", *args, "--skip-fresh", "1h", "--db", str(db))
    assert r.exit_code == 0, r.output
    assert "skipped 1 scenario(s) with a valid result newer than 1h" in r.stderr
    assert "[1/1] matmul:16 numpy/cpu eager fp32 bs=2 n=16" in r.stderr
    r = invoke("run", *args, "--dry-run", "--db", str(db))
    last = r.stdout.splitlines()[-1]
    assert last.startswith("2 scenarios, about ") and last.endswith("(1 estimated from history)")
    r = invoke("run", *args, "--skip-fresh", "1h")
    assert r.exit_code == 2 and "--skip-fresh needs --db FILE" in r.stderr
    r = invoke("run", *args, "--skip-fresh", "soon", "--db", str(db))
    assert r.exit_code == 2 and "--skip-fresh 'soon' is not like 500ms, 2s, 30m, 12h, 7d" in r.stderr


def test_out_and_ingest_through_fsspec_urls(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHDB_CACHE", str(tmp_path / "cache"))
    remote = (tmp_path / "bucket").as_uri()  # file:// through fsspec, as s3:// would be
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:16",
        "--out",
        remote,
        "--no-isolation",
        "--min-time",
        "0.05",
        "--max-time",
        "1",
        "--target-ci",
        "0.5",
        "--max-background-cpu",
        "100%",
    )
    assert r.exit_code == 0, r.output
    assert len(list((tmp_path / "bucket").rglob("*.parquet"))) == 1
    db = tmp_path / "w.duckdb"
    r = invoke("ingest", remote, "--db", str(db))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("ingested 1 new file(s)")
    assert invoke("ingest", remote, "--db", str(db)).stdout.startswith("ingested 0 new file(s), skipped 1")


def test_run_needs_a_backend_or_a_config():
    r = invoke("run", "--model", "matmul:8")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "benchdb: error: give --backend and --model, or --config FILE / --suite NAME (see `benchdb suites`)"
    )


def test_runs_from_puts_the_values_given_over_a_config(tmp_path, monkeypatch):
    """The Python API behind `benchdb run --config FILE --repeats 3`: only the values given override
    the file; a value not given (a parameter's default) leaves the file's own."""
    monkeypatch.setenv("OUT_DIR", str(tmp_path / "o"))
    path = write(tmp_path, GOOD)
    runs, exclude, source = cfgmod.runs_from({"config_file": path, "repeats": 3, "min_iters": 99}, given={"repeats"})
    assert source == str(path) and exclude == [{"model": "matmul:32", "batch_size": 4}]
    assert all(o.repeats == 3 and o.rule.min_iters == 10 for o in runs)


def test_runs_from_the_command_line_alone(tmp_path):
    (run,), exclude, source = cfgmod.runs_from({"backend": "numpy", "models": ("matmul:8",), "batch_sizes": (1, 4)})
    assert (run.models, run.batch_sizes, exclude, source) == (("matmul:8",), (1, 4), [], "command line")
    with pytest.raises(BenchdbError, match="give --bench or --config/--suite, not both"):
        cfgmod.runs_from({"benches": ("b.py",), "suite": "smoke"})
    with pytest.raises(BenchdbError, match="give --backend and --model"):
        cfgmod.runs_from({"backend": "numpy"})
