"""The bisect's search (benchdb/bisect/search.py) alone, its steps judged by where the slow and the
broken commits are: no repository, no measurement."""

from __future__ import annotations

import pytest

from benchdb.bisect.search import Bisection, search
from benchdb.bisect.steps import Commit, Verdict

pytestmark = pytest.mark.core


def test_a_skip_measures_the_nearest_untried_commit():
    """The search alone, judged by where the slow and the broken commits are: a commit that cannot be
    measured at the middle moves the step to the nearest untried one (the older of two as near), later
    steps measure against the newest good commit, and a range left with only skipped commits is named."""
    commits = [Commit(f"{i:040x}", f"change {i + 1}", "2026-11-01") for i in range(6)]
    broken, slow = {2}, 3
    calls = []

    def judge(base: Commit, tested: Commit) -> Verdict:
        calls.append((commits.index(base), commits.index(tested)))
        i = commits.index(tested)
        if i in broken:
            return Verdict("skipped", note="setup failed: broken")
        return Verdict("regressed" if i >= slow else "unchanged", change=2.0 if i >= slow else 0.0)

    b = search(commits, judge, Bisection("x", "repo", commits[0], commits[-1]))
    assert calls == [(0, 5), (0, 2), (0, 1), (1, 3)]
    assert [c.subject for c, _ in b.skipped] == ["change 3"]
    assert b.status == "stopped" and b.last_good == commits[1] and b.suspects == commits[2:4]
    assert "only skipped commits are left" in b.message
    calls.clear()
    broken, slow = set(), 4
    b = search(commits, judge, Bisection("x", "repo", commits[0], commits[-1]))
    assert calls == [(0, 5), (0, 2), (2, 3), (3, 4)]
    assert b.status == "culprit" and b.culprit == commits[4] and b.skipped == []
