"""The trials of an A/B run and their order (benchdb/ab/plan.py): both sides once per trial, back to back,
in counterbalanced orders, and the two more trials an open verdict gets."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from benchdb.ab.plan import extension, schedule
from benchdb.ab.process import SIDES

pytestmark = pytest.mark.core


def test_schedule_runs_both_sides_once_per_trial_in_counterbalanced_orders():
    trials = [5, 5, 4, 3]
    steps = schedule(trials, random.Random(3))
    assert len(steps) == sum(trials)
    for g, k in enumerate(trials):
        mine = [s for s in steps if s.group == g]
        assert [s.trial for s in mine] == list(range(k))  # once per trial, in trial order
        assert all(sorted(s.order) == sorted(SIDES) for s in mine)  # both sides, back to back
        firsts = Counter(s.order[0] for s in mine)
        assert len(firsts) == 2 and abs(firsts["base"] - firsts["cand"]) <= 1  # orders vary, balanced
    for r in range(max(trials)):  # a trial runs every group once
        assert sorted(s.group for s in steps if s.trial == r) == [g for g, k in enumerate(trials) if k > r]
    rounds = [[s.group for s in steps if s.trial == r] for r in range(3)]
    assert len({tuple(r) for r in rounds}) > 1  # the scenario order is reshuffled
    assert schedule(trials, random.Random(3)) == steps  # the seed fixes it all


def test_extension_adds_two_counterbalanced_trials_per_open_group_up_to_the_cap():
    steps = extension([0, 2, 3], {0: 5, 2: 5, 3: 6}, 7, random.Random(1))
    for g, want in ((0, [5, 6]), (2, [5, 6]), (3, [6])):  # group 3 has one trial left
        mine = [s for s in steps if s.group == g]
        assert [s.trial for s in mine] == want
        assert all(sorted(s.order) == sorted(SIDES) for s in mine)
        if len(mine) == 2:  # each side first once
            assert {s.order[0] for s in mine} == set(SIDES)
    assert not [s for s in steps if s.group == 1]  # a decided group gets none
    assert {s.group for s in steps[:3]} == {0, 2, 3} and {s.group for s in steps[3:]} == {0, 2}  # in waves
