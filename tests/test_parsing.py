"""One rule for percentages, durations and sizes on every option and config key (benchdb.parsing).

A gate at `--threshold 5` used to read the bare 5 as a fraction and gate at 500 %: nothing failed.
Real contract files, a real DuckDB warehouse and the real command line (click's CliRunner, and a
subprocess where the folder a run would write matters)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, write_file

from benchdb import parsing as quantity
from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.plan import config as cfgmod
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# ----------------------------------------------------------------------------- the parser
@pytest.mark.parametrize(
    "text,fraction",
    [
        ("5%", 0.05),
        ("0.05", 0.05),
        (0.05, 0.05),
        ("5 %", 0.05),
        ("0.5%", 0.005),
        ("100%", 1.0),
        ("0", 0.0),
        (".3", 0.3),
        ("1e-3", 0.001),
        ("0%", 0.0),
    ],
)
def test_a_share_is_a_percentage_or_a_fraction_below_one(text, fraction):
    assert quantity.share(text) == pytest.approx(fraction)


@pytest.mark.parametrize(
    "value,message",
    [
        ("5", "'5' could mean 5% or 500%; did you mean 5%? (a bare number is a fraction below 1, e.g. 0.05)"),
        ("1", "'1' could mean 1% or 100%; did you mean 1%?"),
        (30, "30 could mean 30% or 3000%; did you mean 30%?"),
        ("1.5", "did you mean 1.5%?"),
        ("-1%", "'-1%' is negative"),
        ("nan", "'nan' is not like 5% or 0.05"),
        ("inf", "'inf' is not like 5% or 0.05"),
        (float("inf"), "inf is not a finite number"),
        ("lots", "'lots' is not like 5% or 0.05"),
        ("5x", "'5x' is not like 5% or 0.05"),
        (True, "True is not a number"),
        ("150%", "'150%' is out of range; give 0% to 100%"),
    ],
)
def test_an_ambiguous_or_bad_share_is_refused_with_what_to_write(value, message):
    with pytest.raises(quantity.QuantityError) as err:
        quantity.share(value)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("500ms", 0.5),
        ("2s", 2.0),
        ("30m", 1800.0),
        ("12h", 43200.0),
        ("7d", 604800.0),
        ("2w", 1209600.0),
        ("1.5", 1.5),
        (3, 3.0),
        ("2 S", 2.0),
        ("1e3ms", 1.0),
    ],
)
def test_a_duration_takes_a_unit_or_bare_seconds(text, seconds):
    assert quantity.duration(text) == pytest.approx(seconds)


def test_a_duration_for_a_millisecond_option_reads_bare_milliseconds():
    assert quantity.duration("250", bare="ms") == pytest.approx(0.25)
    assert quantity.duration("1.5s", bare="ms") == pytest.approx(1.5)


@pytest.mark.parametrize(
    "value,message",
    [
        ("soon", "'soon' is not like 500ms, 2s, 30m, 12h, 7d"),
        ("5x", "'5x': 'x' is not a unit of time"),
        ("-2s", "'-2s' is negative"),
        ("5%", "'%' is not a unit of time"),
    ],
)
def test_a_bad_duration_is_refused(value, message):
    with pytest.raises(quantity.QuantityError) as err:
        quantity.duration(value)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "text,size",
    [
        ("512MiB", 512 * 2**20),
        ("2GiB", 2 * 2**30),
        ("2GB", 2e9),
        ("500kB", 5e5),
        ("4096B", 4096),
        ("1.5gib", 1.5 * 2**30),
    ],
)
def test_a_size_takes_binary_or_decimal_units(text, size):
    assert quantity.size(text) == size


def test_a_bad_size_is_refused_and_a_bare_number_is_in_the_options_unit():
    with pytest.raises(quantity.QuantityError, match="'XB' is not a unit of size"):
        quantity.size("2XB")
    with pytest.raises(quantity.QuantityError, match=r"'512' has no unit; did you mean 512MiB\?"):
        quantity.size("512")  # bytes are never what a bare size means
    assert quantity.size("512", bare="MiB") == 512 * 2**20


def test_the_text_written_for_a_value_reads_back_exactly():
    rng = np.random.default_rng(3)
    for v in [*rng.random(2000), 0.02, 0.07, 0.3, 1.0, 0.0001]:
        assert quantity.share(quantity.percent_text(v)) == v
    for v in [*(rng.random(2000) * 1000), 0.05, 900.0, 0.1]:
        assert quantity.duration(quantity.duration_text(v)) == v
    assert (quantity.percent_text(0.05), quantity.duration_text(900.0)) == ("5%", "900s")


# ----------------------------------------------------------------------------- the gate
def _gate_warehouse(tmp_path) -> Path:
    """One interleaved A/B pair (so the gate knows run-to-run noise): series `slower-3` is 3 %
    slower in the candidate, `slower-10` 10 % slower; tight samples (lognormal sigma 1 %)."""
    tag = "ab-5a5a5a5a"
    base = make_run(started_at="2026-10-01T10:00:00+00:00", tags=[tag, f"{tag}-base"])
    cand = make_run(started_at="2026-10-01T10:00:01+00:00", tags=[tag, f"{tag}-cand"])
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    for i, (run, model, ms) in enumerate(
        [(base, "slower-3", 10.0), (cand, "slower-3", 10.3), (base, "slower-10", 10.0), (cand, "slower-10", 11.0)]
    ):
        values = np.random.default_rng(i).lognormal(np.log(ms / 1e3), 0.01, 60)
        write_file(res, make_meta(run, model_id=model), values, name=f"f{i}.parquet", repeats=3)
    summary = Warehouse(db).ingest([res])
    assert summary.new == 4 and not summary.rejected
    return db


def _verdicts(db, threshold) -> tuple[int, dict[str, str]]:
    r = invoke(
        "check",
        "--baseline",
        "tag:ab-5a5a5a5a-base",
        "--candidate",
        "tag:ab-5a5a5a5a-cand",
        "--threshold",
        threshold,
        "--format",
        "json",
        "--db",
        db,
    )
    body = json.loads(r.stdout)
    return r.exit_code, {c["scenario"]["model_id"]: c["verdict"] for c in body["comparisons"]}


def test_check_threshold_five_is_refused_and_five_percent_gates_at_five_percent(tmp_path):
    db = _gate_warehouse(tmp_path)
    r = invoke(
        "check",
        "--baseline",
        "tag:ab-5a5a5a5a-base",
        "--candidate",
        "tag:ab-5a5a5a5a-cand",
        "--threshold",
        "5",
        "--db",
        db,
    )
    assert r.exit_code == 2  # before: exit 0, both "unchanged" within +-500 %
    assert r.output.strip() == (
        "benchdb: error: --threshold '5' could mean 5% or 500%; did you mean 5%? "
        "(a bare number is a fraction below 1, e.g. 0.05)"
    )
    # 5% and 0.05 are the same gate: the 10 % slowdown fails it, the 3 % one passes
    for spelling in ("5%", "0.05"):
        code, verdicts = _verdicts(db, spelling)
        assert (code, verdicts) == (1, {"slower-3": "unchanged", "slower-10": "regressed"}), spelling
    assert _verdicts(db, "12%") == (0, {"slower-3": "unchanged", "slower-10": "unchanged"})
    assert _verdicts(db, "2%") == (1, {"slower-3": "regressed", "slower-10": "regressed"})


def test_ab_threshold_takes_the_same_rule():
    for command in (("run", "--backend", "numpy", "--model", "matmul:8"), ("bisect",)):
        r = invoke(*command, "--ab-threshold", "10")
        assert r.exit_code == 2 and "--ab-threshold '10' could mean 10% or 1000%; did you mean 10%?" in r.output


def test_max_accuracy_drop_one_percent_and_its_fraction_are_the_same_limit(tmp_path):
    db = tmp_path / "w.duckdb"  # recorded H200 results: some precisions have no agreement with fp32
    assert invoke("ingest", Path(__file__).parent / "fixtures" / "gpu" / "h200", "--db", db).exit_code == 0
    pct = invoke("report", "--optimal-hardware", "--max-accuracy-drop", "1%", "--wide", "--db", db)
    frac = invoke("report", "--optimal-hardware", "--max-accuracy-drop", "0.01", "--wide", "--db", db)
    assert pct.exit_code == frac.exit_code == 0, pct.output
    assert "filters: accuracy drop <= 1 %." in pct.output  # before: 0.01 meant 0.01 %
    assert re.sub(r"generated [^;]+;", "", pct.output) == re.sub(r"generated [^;]+;", "", frac.output)
    bare = invoke("report", "--optimal-hardware", "--max-accuracy-drop", "1", "--db", db)
    assert bare.exit_code == 2 and bare.output.strip() == (
        "benchdb: error: --max-accuracy-drop '1' could mean 1% or 100%; did you mean 1%? (a bare number is a "
        "fraction below 1, e.g. 0.01)"
    )


def test_report_budgets_take_units(tmp_path):
    db = tmp_path / "w.duckdb"
    assert invoke("ingest", Path(__file__).parent / "fixtures" / "gpu" / "h200", "--db", db).exit_code == 0

    def optimal(*args):
        r = invoke("report", "--optimal-hardware", "--format", "json", "--db", db, *args)
        assert r.exit_code == 0, r.output
        return r.output

    assert optimal("--max-latency-ms", "0.5s") == optimal("--max-latency-ms", "500")
    assert optimal("--max-memory-mb", "1GiB") == optimal("--max-memory-mb", "1024")
    # the names the option rules give them: a bare latency is seconds, a bare size is refused
    assert optimal("--max-latency", "500ms") == optimal("--max-latency", "0.5") == optimal("--max-latency-ms", "500")
    assert optimal("--max-memory", "1GiB") == optimal("--max-memory-mb", "1024")
    r = invoke("report", "--optimal-hardware", "--max-memory", "1024", "--db", db)
    assert r.exit_code == 2 and "did you mean 1024MiB?" in r.output
    r = invoke("report", "--optimal-hardware", "--max-memory-mb", "lots", "--db", db)
    assert r.exit_code == 2
    assert r.output.strip() == "benchdb: error: --max-memory-mb 'lots' is not like 512MiB, 2GiB, 2GB"


# ----------------------------------------------------------------------------- run options
@pytest.mark.parametrize(
    "flag,value,message",
    [
        ("--target-ci", "2", "--target-ci '2' could mean 2% or 200%; did you mean 2%?"),
        ("--max-background-cpu", "30", "--max-background-cpu '30' could mean 30% or 3000%; did you mean 30%?"),
        ("--max-background-cpu", "150%", "--max-background-cpu '150%' is out of range; give 0% to 100%"),
        ("--min-time", "soon", "--min-time 'soon' is not like 500ms, 2s, 30m, 12h, 7d"),
        ("--timeout", "0.01", "--timeout '0.01' is too short; give at least 0.1s"),
        ("--skip-fresh", "soon", "--skip-fresh 'soon' is not like 500ms, 2s, 30m, 12h, 7d"),
    ],
)
def test_run_refuses_a_bad_quantity_before_anything_runs(tmp_path, flag, value, message):
    out = tmp_path / "o"
    r = invoke("run", "--backend", "numpy", "--model", "matmul:8", flag, value, "--out", out)
    assert r.exit_code == 2 and r.output.startswith(f"benchdb: error: {message}")
    assert len(r.output.strip().splitlines()) == 1 and not out.exists()


def test_run_records_the_quantities_it_was_given(tmp_path):
    out = tmp_path / "o"
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:8",
        "--no-isolation",
        "--warmup",
        "1",
        "--min-iters",
        "3",
        "--min-time",
        "20ms",
        "--max-time",
        "0.5s",
        "--target-ci",
        "50%",
        "--max-background-cpu",
        "100%",
        "--timeout",
        "2m",
        "--out",
        out,
    )
    assert r.exit_code == 0, r.output
    (plan,) = out.rglob("plan.json")
    (run,) = json.loads(plan.read_text())["runs"]
    assert run["stop_rule"]["min_time_s"] == pytest.approx(0.02) and run["stop_rule"]["max_time_s"] == 0.5
    assert (run["stop_rule"]["target_ci"], run["max_background_cpu"], run["timeout_s"]) == (0.5, 100.0, 120.0)


def test_config_keys_take_the_same_rule(tmp_path):
    def load(settings: str):
        path = tmp_path / "c.yaml"
        path.write_text(f"settings: {{{settings}}}\nruns: [{{backends: numpy, models: matmul:8}}]\n")
        return path

    (opts,) = cfgmod.load(load("target_ci: 2%, max_background_cpu: 0.3, min_time: 500ms, timeout: 2h")).runs
    assert (opts.rule.target_ci, opts.max_background_cpu, opts.rule.min_time_s, opts.timeout_s) == (
        0.02,
        30.0,
        0.5,
        7200.0,
    )
    (opts,) = cfgmod.load(load("target_ci: 0.02, max_background_cpu: 30%, min_time: 0.5")).runs
    assert (opts.rule.target_ci, opts.max_background_cpu, opts.rule.min_time_s) == (0.02, 30.0, 0.5)
    for settings, message in [
        ("target_ci: 5", "config key 'target_ci': 5 could mean 5% or 500%; did you mean 5%?"),
        ("max_background_cpu: 30", "config key 'max_background_cpu': 30 could mean 30% or 3000%; did you mean 30%?"),
        ("min_time: fast", "config key 'min_time': 'fast' is not like 500ms"),
    ]:
        path = load(settings)
        with pytest.raises(BenchdbError) as err:
            cfgmod.load(path)
        assert str(err.value).startswith(f"{path}: config key") and message in str(err.value)
        r = invoke("run", "--config", path, "--dry-run")
        assert r.exit_code == 2 and message in r.output and len(r.output.strip().splitlines()) == 1


def test_help_names_the_forms():
    run_help = invoke("run", "--help").output
    assert "--target-ci PCT" in run_help and "--min-time DURATION" in run_help
    assert "Write 500ms, 2s, 30m, 12h, 7d or bare seconds." in " ".join(run_help.split())
    check_help = " ".join(invoke("check", "--help").output.split())
    assert "--threshold PCT" in check_help and "Write 5% or 0.05 (a bare 5 is refused: 5% or 500%?)" in check_help
    report_help = " ".join(invoke("report", "--help").output.split())
    assert "--max-memory SIZE" in report_help and "--max-latency DURATION" in report_help
    assert "--max-memory-mb" not in report_help  # the old names still work, unlisted
