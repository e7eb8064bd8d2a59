"""The regression gate fails closed: broken candidates fail it, nothing to compare is an
error, `latest` compares each hardware and backend with itself, and the output carries units.

Real contract files, a real DuckDB warehouse, the real command line (click's CliRunner)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import HARDWARE, make_meta, make_run, write_file

from benchdb.cli import main
from benchdb.reports.render import fmt_quantity
from benchdb.schema import contract
from benchdb.warehouse import Warehouse

OTHER_MACHINE = {
    **HARDWARE,
    "vendor": "OtherVendor",
    "device_name": "Other CPU 5000",
    "cpu_model": "Other CPU 5000",
    "cores_logical": 8,
}


def check(db, *args):
    """The check command, its tables with every column whole (the tests read rows)."""
    wide = [] if "--format" in args else ["--wide"]
    return CliRunner().invoke(main, ["check", *args, *wide, "--db", str(db)])


def _lat(seed: int, ms: float = 10.0, n: int = 60):
    return np.random.default_rng(seed).lognormal(np.log(ms / 1e3), 0.01, n)


def _warehouse(tmp_path, files):
    """Write (meta, values) pairs as contract files, ingest them, return the warehouse path. Each
    file's values are dealt to 3 processes (--repeats 3), so verdicts see process-level variance."""
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    for i, (meta, values) in enumerate(files):
        write_file(res, meta, values, name=f"f{i:03d}.parquet", repeats=3)
    summary = Warehouse(db).ingest([res])
    assert summary.new == len(files) and not summary.rejected
    return db


def _ab_runs(base_tags=(), cand_tags=()):
    """The two sides of one interleaved A/B run (tags ab-<id>-base/-cand, as `benchdb run --ab`
    writes them): their processes alternate, so the gate knows their run-to-run noise."""
    return (
        make_run(started_at="2026-10-01T10:00:00+00:00", tags=[*base_tags, "ab-0a1b2c3d", "ab-0a1b2c3d-base"]),
        make_run(started_at="2026-10-01T10:00:01+00:00", tags=[*cand_tags, "ab-0a1b2c3d", "ab-0a1b2c3d-cand"]),
    )


def _broken(run, model_id, status, error=None):
    return make_meta(run, model_id=model_id, status=status, validity="invalid", error=error), []


def _ok(run, model_id, seed, ms=10.0, **kw):
    return make_meta(run, model_id=model_id, **kw), _lat(seed, ms)


# ----------------------------------------------------------------------------- verdicts
def test_broken_candidate_fails_the_gate_and_is_listed_first(tmp_path):
    base, cand = _ab_runs(["base"], ["cand"])
    db = _warehouse(
        tmp_path,
        [
            _ok(base, "a-same", 1),
            _ok(cand, "a-same", 2),
            _ok(base, "b-oom", 3),
            _broken(cand, "b-oom", "oom", "OutOfMemoryError: 2 GiB\nmore text"),
            _broken(base, "c-fixed", "failed", "RuntimeError: boom"),
            _ok(cand, "c-fixed", 4),
            _broken(base, "d-still", "failed", "RuntimeError: boom"),
            _broken(cand, "d-still", "timeout"),
            _ok(base, "e-slower", 5),
            _ok(cand, "e-slower", 6, ms=12.0),
        ],
    )
    r = check(db, "--baseline", "tag:base", "--candidate", "tag:cand")
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "# benchdb check: FAIL (1 broken, 1 regressed)"
    assert (
        "**1 broken**, **1 regressed**, 0 inconclusive, 1 still broken, 0 improved, 1 fixed, 1 unchanged." in r.stdout
    )
    rows = [ln for ln in lines if ln.startswith("| ") and not ln.startswith(("| verdict", "| ---"))]
    assert [row.split(" | ")[0][2:] for row in rows] == [
        "**broken**",
        "**regressed**",
        "still_broken",
        "fixed",
        "unchanged",
    ]
    assert [row.split(" | ")[1] for row in rows] == ["b-oom", "e-slower", "d-still", "c-fixed", "a-same"]
    assert "candidate is oom (OutOfMemoryError: 2 GiB); the baseline was ok" in rows[0]
    assert "baseline was failed (RuntimeError: boom); candidate is timeout" in rows[2]
    assert "baseline was failed (RuntimeError: boom); candidate is ok" in rows[3]
    assert "| oom |" in rows[0]  # the broken side shows its status instead of a median
    assert lines[-1].startswith("Exit 1: fail: a shared series regressed or broke.")

    body = json.loads(check(db, "--baseline", "tag:base", "--candidate", "tag:cand", "--format", "json").stdout)
    assert (body["outcome"], body["exit_code"], body["failed"]) == ("fail", 1, True)
    assert body["counts"] == {
        "broken": 1,
        "regressed": 1,
        "inconclusive": 0,
        "still_broken": 1,
        "improved": 0,
        "fixed": 1,
        "unchanged": 1,
    }
    assert [(c["verdict"], c["failing"], c["base_status"], c["cand_status"]) for c in body["comparisons"]] == [
        ("broken", True, "ok", "oom"),
        ("regressed", True, "ok", "ok"),
        ("still_broken", False, "failed", "timeout"),
        ("fixed", False, "failed", "ok"),
        ("unchanged", False, "ok", "ok"),
    ]


def test_every_broken_status_fails_the_gate(tmp_path):
    base = make_run(started_at="2026-10-01T10:00:00+00:00")
    cand = make_run(started_at="2026-10-02T10:00:00+00:00")
    statuses = ("failed", "oom", "timeout", "mismatch", "unsupported")
    files = [_ok(base, f"m-{s}", i) for i, s in enumerate(statuses)]
    files += [_broken(cand, f"m-{s}", s) for s in statuses]
    db = _warehouse(tmp_path, files)
    r = check(db, "--baseline", "latest~1", "--candidate", "latest", "--format", "json")
    assert r.exit_code == 1, r.output
    body = json.loads(r.stdout)
    assert body["counts"]["broken"] == 5 and body["exit_code"] == 1
    assert sorted(c["cand_status"] for c in body["comparisons"]) == sorted(statuses)


def test_fixed_and_still_broken_pass_the_gate(tmp_path):
    base = make_run(started_at="2026-10-01T10:00:00+00:00")
    cand = make_run(started_at="2026-10-02T10:00:00+00:00")
    db = _warehouse(
        tmp_path,
        [
            _broken(base, "fixed", "oom"),
            _ok(cand, "fixed", 1),
            _broken(base, "still", "unsupported"),
            _broken(cand, "still", "unsupported"),
        ],
    )
    r = check(db, "--baseline", "latest~1", "--candidate", "latest")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("# benchdb check: pass\n")
    assert "0 broken, 0 regressed, 0 inconclusive, 1 still broken, 0 improved, 1 fixed, 0 unchanged." in r.stdout
    assert r.stdout.splitlines()[-1].startswith("Exit 0: pass: every compared series is unchanged, improved or fixed.")


def test_skipped_or_invalid_candidate_is_inconclusive_not_broken(tmp_path):
    base = make_run(started_at="2026-10-01T10:00:00+00:00")
    cand = make_run(started_at="2026-10-02T10:00:00+00:00")
    db = _warehouse(
        tmp_path,
        [
            _ok(base, "skip", 1),
            (make_meta(cand, model_id="skip", status="skipped", validity="invalid"), []),
            _ok(base, "invalid", 2),
            (make_meta(cand, model_id="invalid", validity="invalid"), _lat(3)),
        ],
    )
    r = check(db, "--baseline", "latest~1", "--candidate", "latest", "--format", "json")
    assert r.exit_code == 3, r.output  # nothing failed, nothing decided: undecided, not pass
    body = json.loads(r.stdout)
    assert body["counts"]["inconclusive"] == 2 and body["outcome"] == "undecided"
    assert sorted(c["reason"] for c in body["comparisons"]) == [
        "candidate result is invalid: ",
        "candidate result is skipped",
    ]


# ----------------------------------------------------------------------------- nothing to compare
def test_no_series_on_both_sides_is_an_error_naming_both_sides(tmp_path):
    a = make_run(started_at="2026-10-01T10:00:00+00:00", tags=["a"])
    b = make_run(started_at="2026-10-02T10:00:00+00:00", tags=["b"])
    db = _warehouse(tmp_path, [_ok(a, "m1", 1), _ok(a, "m2", 2), _ok(b, "m3", 3, hardware=OTHER_MACHINE)])
    r = check(db, "--baseline", "tag:a", "--candidate", "tag:b")
    assert r.exit_code == 2 and r.stdout == ""
    assert isinstance(r.exception, SystemExit)  # one line, no traceback
    (line,) = r.stderr.splitlines()
    assert line.startswith(
        "benchdb: error: nothing to compare: no series is on both sides. --baseline 'tag:a' "
        "has 2 series from 1 run(s): 2 on Test CPU 9000/numpy; --candidate 'tag:b' has "
        "1 series from 1 run(s): 1 on Other CPU 5000/numpy. "
    )
    assert "choose selectors whose runs measured the same scenarios on the same hardware" in line
    r = check(db, "--baseline", "tag:a", "--candidate", "tag:b", "--format", "json")
    assert r.exit_code == 2
    body = json.loads(r.stdout)
    assert (body["outcome"], body["exit_code"]) == ("error", 2)
    assert body["error"].startswith("nothing to compare: no series is on both sides.")


def test_unknown_metric_is_an_error_listing_the_metrics(tmp_path):
    base = make_run(started_at="2026-10-01T10:00:00+00:00")
    cand = make_run(started_at="2026-10-02T10:00:00+00:00")
    db = _warehouse(tmp_path, [_ok(base, "m1", 1), _ok(cand, "m1", 2)])
    r = check(db, "--baseline", "latest~1", "--candidate", "latest", "--metric", "nosuch")
    assert r.exit_code == 2
    assert r.stderr == (
        "benchdb: error: --metric 'nosuch' is not measured in the results of --baseline "
        "'latest~1' or --candidate 'latest'; metrics there: latency_s\n"
    )
    assert check(db, "--baseline", "latest~1", "--candidate", "latest", "--metric", "latency_s").exit_code == 3


def test_errors_also_reach_the_github_summary_and_bad_latest_is_refused(tmp_path):
    base = make_run(started_at="2026-10-01T10:00:00+00:00")
    cand = make_run(started_at="2026-10-02T10:00:00+00:00")
    db = _warehouse(tmp_path, [_ok(base, "m1", 1), _broken(cand, "m1", "failed", "boom")])
    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    r = CliRunner().invoke(
        main, ["check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db), "--github-summary"], env=env
    )
    assert r.exit_code == 1 and summary.read_text().startswith("# benchdb check: FAIL (1 broken)\n")
    r = CliRunner().invoke(
        main, ["check", "--baseline", "tag:none", "--candidate", "latest", "--db", str(db), "--github-summary"], env=env
    )
    assert r.exit_code == 2
    assert "# benchdb check: ERROR (exit 2)" in summary.read_text()
    assert "selector 'tag:none' matches no run" in summary.read_text()
    for bad in ("latest~x", "latest~-1", "latest~"):
        r = check(db, "--baseline", bad, "--candidate", "latest")
        assert r.exit_code == 2 and "use latest or latest~N" in r.stderr, bad


def test_check_help_documents_exit_codes_and_latest():
    r = CliRunner().invoke(main, ["check", "--help"])
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    assert "0 pass: every compared series is unchanged, improved or fixed" in text
    assert "3 undecided: nothing failed, but N of M verdicts are inconclusive" in text
    assert "1 fail: a shared series regressed or broke" in text
    assert "2 nothing to compare" in text
    assert "latest = per hardware and backend, its newest run" in text


# ----------------------------------------------------------------------------- latest, like with like
def test_latest_compares_each_machine_with_its_own_previous_run(tmp_path):
    """Two machines feed one warehouse; their runs interleave. A global `latest` would compare
    machine B's newest run with machine A's; per hardware, each is compared with itself."""
    a1 = make_run(started_at="2026-10-01T10:00:00+00:00", host="a")
    b1 = make_run(started_at="2026-10-01T11:00:00+00:00", host="b")
    a2 = make_run(started_at="2026-10-02T10:00:00+00:00", host="a")
    b2 = make_run(started_at="2026-10-02T11:00:00+00:00", host="b")
    db = _warehouse(
        tmp_path,
        [
            _ok(a1, "m1", 1),
            _ok(a2, "m1", 2),  # unchanged on A
            _ok(b1, "m1", 3, hardware=OTHER_MACHINE),
            _ok(b2, "m1", 4, ms=13.0, hardware=OTHER_MACHINE),  # B slower
        ],
    )
    r = check(db, "--baseline", "latest~1", "--candidate", "latest", "--format", "json")
    assert r.exit_code == 3, r.output  # separate invocations, no history: nothing is claimed
    body = json.loads(r.stdout)
    pairs = {
        c["scenario"]["hardware_name"]: (
            c["scenario"]["base_run_id"],
            c["scenario"]["cand_run_id"],
            round(c["change"], 1),
            c["verdict"],
        )
        for c in body["comparisons"]
    }
    assert pairs == {
        "Test CPU 9000": (a1["run_id"], a2["run_id"], 0.0, "inconclusive"),
        "Other CPU 5000": (b1["run_id"], b2["run_id"], 0.3, "inconclusive"),
    }
    assert all("the sides are separate invocations" in c["reason"] for c in body["comparisons"])
    assert [g["hardware_name"] for g in body["sides"]["candidate"]["by_hardware_backend"]] == [
        "Other CPU 5000",
        "Test CPU 9000",
    ]
    md = check(db, "--baseline", "latest~1", "--candidate", "latest").stdout
    assert "- Candidate `latest`: 2 series (Other CPU 5000/numpy: 1, Test CPU 9000/numpy: 1) from 2 run(s)" in md
    # each machine has two runs: there is no third one back
    r = check(db, "--baseline", "latest~2", "--candidate", "latest")
    assert r.exit_code == 2
    assert r.stderr.startswith(
        "benchdb: error: selector 'latest~2' matches no run in the warehouse (no hardware and backend has 3 runs);"
    )


def test_latest_with_one_run_per_backend(tmp_path):
    """`benchdb run` once per backend, twice (no git commit recorded): latest~1 vs latest pairs each
    backend with its own previous run, never numpy with pytorch."""
    runs = [make_run(started_at=f"2026-10-0{day}T10:{minute}:00+00:00") for day in (1, 2) for minute in ("00", "30")]
    np1, pt1, np2, pt2 = runs
    pt = {"backend": "pytorch", "options": {"threads": 1}}
    db = _warehouse(
        tmp_path, [_ok(np1, "m1", 1), _ok(pt1, "m1", 2, **pt), _ok(np2, "m1", 3), _ok(pt2, "m1", 4, ms=12.0, **pt)]
    )
    r = check(db, "--baseline", "latest~1", "--candidate", "latest", "--format", "json")
    assert r.exit_code == 3, r.output
    body = json.loads(r.stdout)
    got = {
        c["scenario"]["backend"]: (c["scenario"]["base_run_id"], c["scenario"]["cand_run_id"], round(c["change"], 1))
        for c in body["comparisons"]
    }
    assert got == {"numpy": (np1["run_id"], np2["run_id"], 0.0), "pytorch": (pt1["run_id"], pt2["run_id"], 0.2)}
    assert body["counts"]["inconclusive"] == 2
    # runs, not backends, are what the explicit selectors pick: one run per side -> nothing in common
    r = check(db, "--baseline", f"run:{np2['run_id']}", "--candidate", f"run:{pt2['run_id']}")
    assert r.exit_code == 2 and "nothing to compare" in r.stderr
    assert "1 on Test CPU 9000/numpy" in r.stderr and "1 on Test CPU 9000/pytorch" in r.stderr


# ----------------------------------------------------------------------------- output
def test_values_carry_units_and_the_table_shows_mode_precision_threads(tmp_path):
    base, cand = _ab_runs()
    files = []
    for run in (base, cand):
        files += [
            (make_meta(run, model_id="tiny", mode="compile", precision="fp16", options={"threads": 4}), [50e-6] * 20),
            (make_meta(run, model_id="mid"), [0.0123] * 20),
            (make_meta(run, model_id="big"), [2.5] * 20),
        ]
    db = _warehouse(tmp_path, files)
    r = check(db, "--baseline", "latest~1", "--candidate", "latest")
    assert r.exit_code == 0, r.output
    assert (
        "| verdict | model | batch | input | hardware | device | backend | mode | precision | threads | baseline "
        "| candidate | change | 95% CI | threshold | n | why |"
    ) in r.stdout
    assert (
        "| unchanged | tiny | 1 | n=64 | Test CPU 9000 | cpu | numpy | compile | fp16 | 4 | 50.00 µs | 50.00 µs "
        "| +0.0% |"
    ) in r.stdout
    assert "| mid | 1 | n=64 | Test CPU 9000 | cpu | numpy | eager | fp32 | 1 | 12.30 ms | 12.30 ms |" in r.stdout
    assert "| big | 1 | n=64 | Test CPU 9000 | cpu | numpy | eager | fp32 | 1 | 2.500 s | 2.500 s |" in r.stdout
    body = json.loads(check(db, "--baseline", "latest~1", "--candidate", "latest", "--format", "json").stdout)
    tiny = next(c for c in body["comparisons"] if c["scenario"]["model_id"] == "tiny")
    assert tiny["unit"] == "s" and tiny["base_median"] == pytest.approx(50e-6) and tiny["n_base"] == 20
    assert tiny["scenario"]["mode"] == "compile" and tiny["scenario"]["threads"] == 4
    for key in ("cand_median", "change", "ci_low", "ci_high", "threshold", "noise", "verdict", "reason"):
        assert key in tiny
    assert body["exit_meaning"] == "pass: every compared series is unchanged, improved or fixed"
    assert set(body["exit_codes"]) == {"0", "1", "2", "3"}


def test_throughput_metric_shows_its_unit_and_regresses_downward(tmp_path):
    base, cand = _ab_runs()
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    res.mkdir()
    for run, rate, name in ((base, 1500.0, "b"), (cand, 1200.0, "c")):
        meta = make_meta(run, model_id="gen")
        meta["scenario"]["repeats"] = 3  # three processes per side
        rows = [("latency_s", "s", i, i * 1e-3, 0.01, i % 3) for i in range(21)]
        rows += [
            ("tokens_per_s", "tokens/s", i, i * 1e-3, float(v), i % 3)
            for i, v in enumerate(np.linspace(rate - 10, rate + 10, 42))
        ]
        contract.write_scenario(res / f"{name}.parquet", meta, contract.samples_table(meta, rows))
    assert Warehouse(db).ingest([res]).new == 2
    r = check(db, "--baseline", "latest~1", "--candidate", "latest", "--metric", "tokens_per_s")
    assert r.exit_code == 1, r.output
    row = next(ln for ln in r.stdout.splitlines() if ln.startswith("| **regressed** | gen"))
    assert "| 1,500.0 tokens/s | 1,200.0 tokens/s | -20.0% |" in row
    r = check(db, "--baseline", "latest~1", "--candidate", "latest", "--metric", "tokens")
    assert r.exit_code == 2 and r.stderr.endswith("; metrics there: latency_s, tokens_per_s\n")


@pytest.mark.parametrize(
    "value, unit, expected",
    [
        (0.0123, "s", "12.30 ms"),
        (1.5e-5, "s", "15.00 µs"),
        (2.5, "s", "2.500 s"),
        (0.25, "s", "250.0 ms"),
        (4321.0, "s", "4,321 s"),
        (1234.5, "items/s", "1,234.5 items/s"),
        (42.123, "tokens/s", "42.12 tokens/s"),
        (3 * 2**20, "bytes", "3.0 MiB"),
        (5 * 2**30, "bytes", "5.0 GiB"),
        (7.0, None, "7.000"),
        (None, "s", ""),
    ],
)
def test_quantities_are_scaled_with_units(value, unit, expected):
    assert fmt_quantity(value, unit) == expected


def test_one_row_shares_one_scale():
    assert fmt_quantity(0.0009, "s", ref=0.0011) == "0.900 ms"


def test_a_gate_over_many_series_judges_them_a_pass_at_a_time_with_the_same_verdicts(tmp_path, monkeypatch):
    """Memory stays bounded on a whole fleet (check night against night at 1B samples held 5 GB
    when every compared sample was read at once): series are read and judged in passes of at most
    PASS_SAMPLES samples, with exactly the verdicts and figures of one pass."""
    from benchdb.analysis import check as gate_check
    from benchdb.store import database

    base, cand = _ab_runs()  # one interleaved A/B: the gate knows its run-to-run noise
    files = []
    for i in range(7):  # unchanged, slower and faster series
        files += [_ok(base, f"m{i}", seed=i), _ok(cand, f"m{i}", seed=100 + i, ms=10.0 * (1.0, 1.2, 0.8)[i % 3])]
    db = _warehouse(tmp_path, files)

    def figures(limit):
        monkeypatch.setattr(gate_check, "PASS_SAMPLES", limit)
        con, _ = database.open_readonly(db)
        try:
            result = gate_check.compare(con, f"run:{base['run_id']}", f"run:{cand['run_id']}")
        finally:
            con.close()
        return [
            (
                c.scenario["series_id"],
                c.verdict,
                c.n_base,
                c.n_cand,
                c.change,
                c.ci_low,
                c.ci_high,
                c.eq_low,
                c.eq_high,
                c.processes,
            )
            for c in result.comparisons
        ]

    passes = []
    monkeypatch.setattr(
        gate_check,
        "_judge_chunk",
        lambda *a, _f=gate_check._judge_chunk, **k: (passes.append(len(a[2])), _f(*a, **k))[1],
    )
    whole = figures(10**9)
    assert passes == [7]
    passes.clear()
    assert figures(1) == whole and passes == [1] * 7
    assert {row[1] for row in whole} == {"unchanged", "regressed", "improved"}
