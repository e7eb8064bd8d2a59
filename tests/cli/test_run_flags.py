"""The flags `benchdb run` and `benchdb bisect` share are declared once: the run options from their
declarations, the A/B stopping options from one factory; bisect words only its own meanings."""

from __future__ import annotations

import pytest

from benchdb.cli import bisect, run
from benchdb.cli.run_flags import AB_MAX_TRIALS_HELP, AB_THRESHOLD_HELP

pytestmark = pytest.mark.core

#: Options whose meaning differs on bisect, each with why (its help says so).
BISECT_OWN = {
    "backend": "CHANGE_ID or --bench may name it",
    "repeats": "trials per step, default 5",
    "config_file": "read from each commit's checkout",
    "benches": "each commit runs its own copy",
    "db": "the warehouse holding CHANGE_ID",
    "ab_max_trials": "default 15: a step goes on while its verdict is open",
}


def test_options_bisect_shares_with_run_have_one_help_text():
    ours = {o.name: o for o in run.run.params}
    theirs = {o.name: o for o in bisect.bisect.params}
    shared = set(ours) & set(theirs)
    assert {"ab_max_trials", "ab_threshold", "models", "min_time"} <= shared
    assert (ours["ab_max_trials"].help, ours["ab_threshold"].help) == (AB_MAX_TRIALS_HELP, AB_THRESHOLD_HELP)
    differ = {n for n in shared if ours[n].help != theirs[n].help or ours[n].type.name != theirs[n].type.name}
    assert differ <= set(BISECT_OWN) - {"ab_max_trials"}, sorted(differ)
    defaults = {n for n in shared if ours[n].default != theirs[n].default}
    assert defaults <= set(BISECT_OWN), sorted(defaults)


def test_the_ab_stopping_options_keep_each_commands_default():
    for command, trials in ((run.run, 0), (bisect.bisect, 15)):
        defaults = {o.name: o.default for o in command.params}
        assert (defaults["ab_max_trials"], defaults["ab_threshold"]) == (trials, "5%"), command.name
