"""`benchdb bisect` as one call (:mod:`benchdb.bisect.find`): what it refuses before touching git,
and the command it prints to measure its final comparison again."""

from __future__ import annotations

import pytest

from benchdb.bisect.find import culprit, reproduce
from benchdb.bisect.search import Bisection, search
from benchdb.bisect.steps import Commit, Verdict
from benchdb.errors import BenchdbError

pytestmark = pytest.mark.core

COMMITS = [Commit(f"{i:040x}", f"change {i + 1}", "2026-11-01") for i in range(4)]


@pytest.mark.parametrize(
    "given,says",
    [
        ({"change_id": "3f2a", "good": "HEAD~1"}, "give CHANGE_ID or --good/--bad, not both"),
        ({"good": "HEAD~1"}, "give --good REV and --bad REV (or a CHANGE_ID"),
    ],
)
def test_the_commits_are_given_one_way(tmp_path, given, says):
    with pytest.raises(BenchdbError, match=says.replace("(", r"\(")):
        culprit({"backend": "numpy", "models": ("matmul:8",)}, repo=tmp_path, **given)


def test_reproduce_measures_the_culprit_against_the_commit_before_it():
    def judge(base: Commit, tested: Commit) -> Verdict:
        return Verdict("regressed" if COMMITS.index(tested) >= 2 else "unchanged")

    found = search(COMMITS, judge, Bisection("b1", "/repo", COMMITS[0], COMMITS[-1]))
    values = {"backend": "numpy", "models": ("matmul:64", "matmul:128"), "repeats": 5}
    line = reproduce(found, values, setup="make env", flags=["--min-time", "0.2s"], max_trials=15, threshold=0.05)
    assert line == (
        f"benchdb bisect --repo /repo --good {COMMITS[1].sha[:12]} --bad {COMMITS[2].sha[:12]} --setup 'make env' "
        "--backend numpy --model matmul:64 --model matmul:128 --min-time 0.2s --repeats 5 --ab-max-trials 15 "
        "--ab-threshold 5%"
    )
    benches = reproduce(found, {"benches": ("b.py",), "repeats": 3}, setup=None, flags=[], max_trials=0, threshold=0.1)
    assert benches.endswith("--bench b.py --repeats 3 --ab-max-trials 0 --ab-threshold 10%")


def test_reproduce_names_the_culprits_step_when_a_later_step_was_another_pair():
    # 3 commits, slower from the 3rd: 3 against 1 (regressed), then 2 against 1 (unchanged) names 3;
    # the last step compared 2 with 1, the line measures 3 against 1, the comparison that named it
    commits = [Commit(f"{i}" * 40, f"change {i}", "2026-11-01") for i in (1, 2, 3)]  # 12-char shas differ

    def judge(base: Commit, tested: Commit) -> Verdict:
        return Verdict("regressed" if commits.index(tested) >= 2 else "unchanged")

    found = search(commits, judge, Bisection("b2", "/repo", commits[0], commits[-1]))
    assert found.culprit == commits[2] and found.steps[-1].tested == commits[1]
    line = reproduce(found, {"benches": ("b.py",), "repeats": 3}, setup=None, flags=[], max_trials=15, threshold=0.5)
    assert f"--good {commits[0].sha[:12]} --bad {commits[2].sha[:12]} " in line
