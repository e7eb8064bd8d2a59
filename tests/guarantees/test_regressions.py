"""Regression gate and change points on synthetic series generated here, and on a real warehouse."""

import json

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, write_file

from benchdb.analysis import check, gate, verdict
from benchdb.analysis.stats import bootstrap_median_ratio, e_divisive, robust_noise
from benchdb.cli import main


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


# ----------------------------------------------------------------------------- change points
def _series(rng, n=30, step=0.0, at=15, spike=False, drift=0.0, noise=0.01):
    """Per-run medians: heavy-tailed (Student t, 3 dof) noise, optional drift, spike, step."""
    x = (1 + noise * rng.standard_t(3, n)) * (1 + drift * np.arange(n) / n)
    x[at:] *= 1 + step
    if spike:
        x[rng.integers(3, n - 3)] *= 1.3
    return x


def test_change_point_corpus_recall_and_false_alarms():
    rng = np.random.default_rng(42)
    found = {}
    for step in (0.05, 0.1, 0.2):
        hits = 0
        for _ in range(40):
            at = int(rng.integers(8, 22))
            cps = e_divisive(_series(rng, step=step, at=at))
            hits += any(abs(c.index - at) <= 1 and c.change > 0.02 for c in cps)
        found[step] = hits / 40
    assert all(r >= 0.9 for r in found.values()), found
    spikes = sum(bool(e_divisive(_series(rng, spike=True))) for _ in range(60)) / 60
    flat = sum(bool(e_divisive(_series(rng))) for _ in range(60)) / 60
    drift = sum(bool(e_divisive(_series(rng, drift=0.02))) for _ in range(60)) / 60
    assert spikes <= 0.05 and flat <= 0.05 and drift <= 0.1, (spikes, flat, drift)


def test_single_spike_is_never_a_change_point():
    x = np.ones(20)
    x[10] = 3.0
    assert e_divisive(x) == []


def test_minimum_segment_and_effect():
    x = np.r_[np.ones(10), np.ones(2) * 1.5]  # only 2 points after: too short
    assert e_divisive(x, min_segment=3) == []
    y = np.r_[np.ones(10), np.ones(10) * 1.01]  # 1 % shift: below the minimum effect
    assert e_divisive(y, min_effect=0.03) == []
    z = np.r_[np.ones(10), np.ones(10) * 1.10]
    (cp,) = e_divisive(z)
    assert cp.index == 10 and cp.change == pytest.approx(0.10)


# ----------------------------------------------------------------------------- gate statistics
def _pair(rng, n=200, shift=0.0, sigma=0.05):
    base = rng.lognormal(np.log(0.01), sigma, n) + rng.exponential(0.0005, n)  # heavy right tail
    cand = (rng.lognormal(np.log(0.01), sigma, n) + rng.exponential(0.0005, n)) * (1 + shift)
    return list(base), list(cand)


def _verdict(b, c, history=None, threshold=0.05, processes=3, interleaved=True):
    """The gate's verdict on two sides, each measured in ``processes`` processes (of one
    interleaved A/B run unless ``interleaved=False``)."""
    base = gate.SideSamples("ok", "valid", unit="s", values=b, processes=np.array_split(np.asarray(b), processes))
    cand = gate.SideSamples("ok", "valid", unit="s", values=c, processes=np.array_split(np.asarray(c), processes))
    return verdict.judge({}, base, cand, history=history, threshold=threshold, interleaved=interleaved)


def test_a_a_comparisons_are_almost_never_flagged():
    rng = np.random.default_rng(7)
    flagged = sum(_verdict(*_pair(rng)).verdict in ("regressed", "improved") for _ in range(200))
    assert flagged <= 2


def test_real_regressions_are_found_and_direction_respected():
    # 5 processes a side (--ab's default) of 100 samples; with 3 of 67 the process part of the
    # interval is 2.7x wider (hierarchy.small_sample_factor) and 10 % is found 38 times in 50
    rng = np.random.default_rng(8)
    assert sum(_verdict(*_pair(rng, n=500, shift=0.10), processes=5).verdict == "regressed" for _ in range(50)) >= 48
    assert sum(_verdict(*_pair(rng, n=500, shift=-0.10), processes=5).verdict == "improved" for _ in range(50)) >= 48
    # throughput-like units regress downward
    b, c = _pair(rng, n=500, shift=-0.10)
    v = verdict.judge(
        {},
        gate.SideSamples("ok", "valid", unit="tokens/s", values=b, processes=np.array_split(np.asarray(b), 5)),
        gate.SideSamples("ok", "valid", unit="tokens/s", values=c, processes=np.array_split(np.asarray(c), 5)),
        threshold=0.05,
        interleaved=True,
    )
    assert v.verdict == "regressed"


def test_one_process_per_side_without_history_is_inconclusive_and_names_the_remedy():
    """A within-process interval cannot see run-to-run shifts (10-40 % on shared machines)."""
    rng = np.random.default_rng(3)
    b, c = _pair(rng, shift=0.30)
    v = _verdict(b, c, processes=1)
    assert v.verdict == "inconclusive" and v.change == pytest.approx(0.30, abs=0.03)
    assert v.reason.startswith("run-to-run noise unknown") and "--repeats" in v.reason
    # with the series' own history the noise is known, and the verdict is definite
    assert _verdict(b, c, history=[0.01] * 10, processes=1).verdict == "regressed"


def test_separate_invocations_without_history_are_inconclusive_whatever_their_repeats():
    """Three processes per side from two invocations minutes apart share two different moments of
    the machine: their spread cannot see the shift between them (A/A +50 % on this VM)."""
    rng = np.random.default_rng(5)
    b, c = _pair(rng, shift=0.30)
    v = _verdict(b, c, processes=3, interleaved=False)
    assert v.verdict == "inconclusive" and v.processes == (3, 3)
    assert (
        v.reason.startswith(
            "run-to-run noise unknown: the sides are separate invocations and the series has no history"
        )
        and "--ab" in v.reason
        and "8 runs" in v.reason
    )
    assert v.change == pytest.approx(0.30, abs=0.03) and v.interval.startswith("hierarchical")
    assert _verdict(b, c, processes=3, interleaved=True).verdict == "regressed"  # one A/B run
    assert _verdict(b, c, history=[0.01] * 10, processes=3, interleaved=False).verdict == "regressed"
    same = _verdict(*_pair(rng), processes=3, interleaved=False)
    assert same.verdict == "inconclusive"  # nor "unchanged": it cannot know that either


def test_a_change_whose_whole_interval_is_inside_the_threshold_is_unchanged():
    """+1 % with a tight CI at a 5 % threshold is the clearest 'unchanged' (an equivalence test)."""
    rng = np.random.default_rng(4)
    b = list(rng.normal(0.01, 1e-5, 3000))
    c = list(rng.normal(0.0101, 1e-5, 3000))
    v = _verdict(b, c)
    assert v.ci_low > 0.005 and v.ci_high < 0.015  # significant ...
    assert v.verdict == "unchanged" and v.reason.startswith("whole 90% CI")  # ... and practically nothing
    assert "within +-5.0%" in v.reason and "two one-sided tests" in v.reason
    # the equivalence interval (90 %) comes from the same resamples: nested in the 95 % one
    assert v.ci_low <= v.eq_low <= v.change <= v.eq_high <= v.ci_high
    spread = [rng.normal(0.01 * f, 1e-5, 1000) for f in (1.02, 1.05, 1.08)]  # processes disagree
    straddle = verdict.judge(
        {},
        gate.SideSamples("ok", "valid", unit="s", values=b, processes=np.array_split(np.asarray(b), 3)),
        gate.SideSamples("ok", "valid", unit="s", values=np.concatenate(spread), processes=spread),
        threshold=0.05,
        interleaved=True,
    )
    assert straddle.ci_low < 0.05 < straddle.ci_high and straddle.eq_low < 0.05 < straddle.eq_high
    assert straddle.verdict == "inconclusive" and "straddles" in straddle.reason
    # beyond the threshold at 90 %, not at 95 %: the reason names the interval that falls short
    rng = np.random.default_rng(3)
    tight = [rng.normal(0.01, 1e-5, 1000) for _ in range(3)]
    apart = [rng.normal(0.01 * f, 1e-5, 1000) for f in (1.09, 1.12, 1.15)]
    short = verdict.judge(
        {},
        gate.SideSamples("ok", "valid", unit="s", values=np.concatenate(tight), processes=tight),
        gate.SideSamples("ok", "valid", unit="s", values=np.concatenate(apart), processes=apart),
        threshold=0.05,
        interleaved=True,
    )
    assert short.ci_low < 0.05 < short.eq_low and short.verdict == "inconclusive"
    assert short.reason.startswith(f"the 95% CI [{short.ci_low:+.1%}, {short.ci_high:+.1%}] is not wholly beyond")


def test_noisy_history_raises_the_threshold():
    rng = np.random.default_rng(9)
    b, c = _pair(rng, shift=0.08)
    quiet = _verdict(b, c, history=[0.01] * 10, processes=1)  # history makes the noise known
    noisy_history = list(0.01 * (1 + 0.05 * rng.standard_normal(12)))
    noisy = _verdict(b, c, history=noisy_history, processes=1)
    assert quiet.verdict == "regressed" and quiet.threshold == 0.05
    assert noisy.threshold > 0.08 and noisy.verdict != "regressed"
    assert noisy.noise == pytest.approx(robust_noise(noisy_history))


def test_too_few_samples_or_invalid_is_inconclusive():
    assert _verdict([0.01] * 5, [0.02] * 5).verdict == "inconclusive"
    v = verdict.judge(
        {}, gate.SideSamples("ok", "valid"), gate.SideSamples("ok", "invalid", ("noisy: x",)), threshold=0.05
    )
    assert (v.verdict, v.reason) == ("inconclusive", "candidate result is invalid: noisy: x")


@pytest.mark.parametrize("n", [1, 2, 7, 40, 51])
def test_bootstrap_medians_follow_the_distribution_of_resampled_medians(n):
    """Drawn from the exact distribution, not by resampling: the same law as the brute force."""
    from benchdb.analysis.stats import bootstrap_medians

    x = np.random.default_rng(n).lognormal(0, 0.5, n)
    exact = bootstrap_medians(x, 40_000, np.random.default_rng(1))
    brute = np.median(x[np.random.default_rng(2).integers(0, n, (40_000, n))], axis=1)
    if n % 2:  # odd: every bootstrap median is one of the values
        assert set(np.unique(exact)) <= set(x)
    for q in (0.025, 0.1, 0.5, 0.9, 0.975):
        # the same quantile, up to the Monte Carlo error of 40,000 draws (a neighbouring order statistic)
        lo, hi = np.quantile(brute, [max(q - 0.01, 0), min(q + 0.01, 1)])
        assert lo <= np.quantile(exact, q) <= hi, (q, np.quantile(exact, q), lo, hi)


def test_bootstrap_interval_covers_the_true_change():
    rng = np.random.default_rng(3)
    b, c = _pair(rng, n=400, shift=0.05)
    point, lo, hi = bootstrap_median_ratio(b, c)
    assert lo < 0.05 < hi and lo < point < hi


# ----------------------------------------------------------------------------- through the warehouse
def _history(folder, n_runs, step_at=None, step=0.0, models=("m1",), extra_last=None):
    """One run per day; each model's latency samples ~ lognormal around 10 ms, shifted after step_at."""
    rng = np.random.default_rng(11)
    runs = []
    for i in range(n_runs):
        run = make_run(
            started_at=f"2026-10-{i + 1:02d}T10:00:00+00:00", git_commit=f"{i:02d}" + "a" * 38, tags=[f"build-{i}"]
        )
        runs.append(run)
        for model in models:
            scale = 1 + (step if step_at is not None and i >= step_at else 0.0)
            vals = rng.lognormal(np.log(0.01 * scale), 0.01, 60)
            write_file(folder, make_meta(run, model_id=model), vals, name=f"{model}-{i}.parquet", repeats=3)
        if extra_last and i == n_runs - 1:
            write_file(
                folder,
                make_meta(run, model_id=extra_last),
                rng.lognormal(np.log(0.01), 0.01, 60),
                name=f"extra-{i}.parquet",
            )
    return runs


def test_check_gate_through_the_cli(tmp_path):
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    # 9 runs of history (gate.MIN_HISTORY = 8 before a candidate): separate invocations get verdicts
    runs = _history(res, 10, step_at=9, step=0.15, models=("m1", "m2"), extra_last="m3")
    assert invoke("ingest", str(res), "--db", str(db)).exit_code == 0
    r = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db))
    assert r.exit_code == 1, r.output
    assert r.stdout.startswith("# benchdb check: FAIL (2 regressed)\n")
    assert "0 broken, **2 regressed**, 0 inconclusive, 0 still broken, 0 improved, 0 fixed, 0 unchanged." in r.stdout
    assert "Only in the candidate (1, not compared): m3 numpy/cpu eager fp32 bs=1 n=64 on Test CPU 9000" in r.stdout
    # no change between two earlier runs: exit 0
    r = invoke(
        "check",
        "--baseline",
        f"run:{runs[1]['run_id']}",
        "--candidate",
        "commit:08",
        "--db",
        str(db),
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["counts"] == {
        "broken": 0,
        "regressed": 0,
        "inconclusive": 0,
        "still_broken": 0,
        "improved": 0,
        "fixed": 0,
        "unchanged": 2,
    }
    assert (body["outcome"], body["exit_code"]) == ("pass", 0)
    r = invoke(
        "check", "--baseline", "tag:build-0", "--candidate", "time:2026-10-10..", "--db", str(db), "--format", "json"
    )
    assert r.exit_code == 1 and json.loads(r.stdout)["counts"]["regressed"] == 2
    # without history, the same separate invocations are inconclusive and say why
    r = invoke(
        "check",
        "--baseline",
        f"run:{runs[2]['run_id']}",
        "--candidate",
        "commit:03",
        "--db",
        str(db),
        "--format",
        "json",
    )
    body = json.loads(r.stdout)
    assert r.exit_code == 3 and body["counts"]["inconclusive"] == 2 and body["outcome"] == "undecided"
    assert all(
        c["reason"].startswith("run-to-run noise unknown: the sides are separate invocations")
        for c in body["comparisons"]
    )


def test_check_selector_errors(tmp_path):
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    _history(res, 2)
    invoke("ingest", str(res), "--db", str(db))
    r = invoke("check", "--baseline", "commit:ffff", "--candidate", "latest", "--db", str(db))
    assert r.exit_code == 2
    assert r.stderr.startswith("benchdb: error: selector 'commit:ffff' matches no run in the warehouse;")
    r = invoke("check", "--baseline", "latest", "--candidate", "latest", "--db", str(db))
    assert r.exit_code == 2 and "pick the same run(s)" in r.stderr
    r = invoke("check", "--baseline", "branch:main", "--candidate", "latest", "--db", str(db))
    assert r.exit_code == 2 and "use latest, latest~N, run:ID, commit:SHA, tag:NAME or time:FROM..TO" in r.stderr
    r = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--threshold", "five", "--db", str(db))
    assert r.exit_code == 2 and "--threshold 'five' is not like 5% or 0.05" in r.stderr


def test_change_points_found_at_ingest_reported_and_acked(tmp_path):
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    runs = _history(res, 12, step_at=6, step=0.10)
    r = invoke("ingest", str(res), "--db", str(db))
    assert r.exit_code == 0
    assert "1 open change point(s)" in r.stdout
    rows = json.loads(invoke("report", "--regressions", "--format", "json", "--db", str(db)).stdout)
    assert len(rows) == 1
    cp = rows[0]
    assert cp["run_id"] == runs[6]["run_id"] and cp["git_commit"].startswith("06")
    assert cp["change"] == pytest.approx(0.10, abs=0.01)
    assert (cp["points_before"], cp["points_after"]) == (6, 6)
    trends = json.loads(invoke("report", "--trends", "--format", "json", "--db", str(db)).stdout)
    assert [t["run_id"] for t in trends if t["change_point"]] == [runs[6]["run_id"]]
    r = invoke("ack", cp["change_id"][:8], "--note", "expected: bigger model", "--db", str(db))
    assert r.exit_code == 0 and r.stdout.startswith(f"acknowledged change point {cp['change_id']}")
    r = invoke("report", "--regressions", "--db", str(db))  # good news is not a failure
    assert r.exit_code == 0 and "No open change points in 1 series (12 runs); 1 acknowledged change point" in r.stdout
    # re-detection keeps the acknowledgement
    invoke("ingest", str(res), "--db", str(db))
    r = invoke("report", "--regressions", "--db", str(db))
    assert r.exit_code == 0 and "1 acknowledged change point" in r.stdout
    r = invoke("ack", "zzzzzz", "--note", "x", "--db", str(db))
    assert r.exit_code == 2 and "no change point 'zzzzzz'" in r.stderr


def test_gate_on_two_real_runs_of_the_same_scenario(tmp_path):
    """Two real numpy runs of one scenario: one comparison with a CI, and the exit code follows it.
    (How often real A/A runs get flagged here is measured by benchmarks/regressions_eval.py.)"""
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    for _ in range(2):
        r = invoke(
            "run",
            "--backend",
            "numpy",
            "--model",
            "matmul:128",
            "--min-time",
            "0.5",
            "--max-time",
            "2",
            "--max-background-cpu",
            "100%",
            "--out",
            str(out),
            "--no-isolation",
        )
        assert r.exit_code == 0
    invoke("ingest", str(out), "--db", str(db))
    r = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db), "--format", "json")
    body = json.loads(r.stdout)
    (c,) = body["comparisons"]
    assert c["n_base"] >= 10 and c["n_cand"] >= 10
    # The gate's rule for this pair: two separate invocations of one process each, and no history of
    # the series, so run-to-run noise is unknown and the one right verdict is inconclusive (exit 3),
    # whatever the two medians are. The reason: that rule, or -- judged before it -- an invalid result
    # (a noisy measurement), as the warehouse records it.
    assert c["verdict"] == "inconclusive", c
    assert (r.exit_code, body["exit_code"], body["outcome"]) == (3, 3, "undecided")
    validity = {
        row[0]
        for row in duckdb.connect(str(db), read_only=True).execute("SELECT DISTINCT validity FROM results").fetchall()
    }
    if validity == {"valid"}:
        assert c["reason"].startswith("run-to-run noise unknown: 1 process on a side and no history of this series"), c
        assert c["ci_low"] <= c["change"] <= c["ci_high"]
    else:
        assert "result is invalid" in c["reason"], c


def test_check_through_the_cli_says_improved_for_a_faster_candidate(tmp_path):
    """The same history as test_check_gate_through_the_cli, the last run 15 % faster: `benchdb check`
    says improved for both series and passes (exit 0)."""
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    _history(res, 10, step_at=9, step=-0.15, models=("m1", "m2"))
    assert invoke("ingest", str(res), "--db", str(db)).exit_code == 0
    r = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db), "--format", "json")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["counts"] == {
        "broken": 0,
        "regressed": 0,
        "inconclusive": 0,
        "still_broken": 0,
        "improved": 2,
        "fixed": 0,
        "unchanged": 0,
    }
    assert (body["outcome"], body["exit_code"]) == ("pass", 0)
    for c in body["comparisons"]:
        assert c["verdict"] == "improved" and c["reason"] == "whole 95% CI beyond -5.0%", c
        assert c["change"] == pytest.approx(-0.15, abs=0.02) and c["ci_high"] < -0.05
    r = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("# benchdb check: pass\n")
    assert "0 broken, 0 regressed, 0 inconclusive, 0 still broken, 2 improved, 0 fixed, 0 unchanged." in " ".join(
        r.stdout.split()
    )
    assert "Exit 0: pass: every compared series is unchanged, improved or fixed." in " ".join(r.stdout.split())


def test_history_counts_from_min_history_points_and_not_for_an_interleaved_ab_pair():
    """Noise from 4-7 medians is too rough to widen or narrow a gate; an --ab pair ignores history."""
    rng = np.random.default_rng(5)
    b, c = _pair(rng, shift=0.30)
    short = _verdict(b, c, history=[0.01] * (gate.MIN_HISTORY - 1), processes=1)
    assert short.noise is None and short.verdict == "inconclusive"
    assert _verdict(b, c, history=[0.01] * gate.MIN_HISTORY, processes=1).verdict == "regressed"

    def side(role, ab="ab-1234abcd"):
        return [{"run_tags": ["ab-x", f"{ab}-{role}"] if ab else ["nightly"]}]

    assert check._ab_pair(side("base"), side("cand"))
    assert not check._ab_pair(side("base"), side("cand", ab="ab-99999999"))  # two different A/B runs
    assert not check._ab_pair(side("cand"), side("base"))  # sides swapped
    assert not check._ab_pair(side("base", ab=None), side("cand"))  # a plain run
