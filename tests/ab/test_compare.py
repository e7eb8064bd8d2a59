"""An A/B as one call (:mod:`benchdb.ab.compare`): the options refused before any interpreter is
probed, and a dry run's plan of both sides."""

from __future__ import annotations

import sys

import pytest

from benchdb.ab.compare import compare
from benchdb.errors import BenchdbError
from benchdb.plan.config import runs_from

pytestmark = pytest.mark.core


def _runs():
    runs, _exclude, _source = runs_from({"backend": "numpy", "models": ("matmul:8",), "batch_sizes": (1, 4)})
    return runs


@pytest.mark.parametrize(
    "options,says",
    [
        ({"skip_fresh": "1h"}, "--ab measures both sides afresh; drop --skip-fresh"),
        ({"max_trials": 3}, "--ab-max-trials 3 is below --repeats 5"),
        ({"env_public": ("TOKEN",)}, "--ab-env-public TOKEN: no --ab-env sets it"),
    ],
)
def test_options_that_cannot_work_are_refused_first(options, says):
    with pytest.raises(BenchdbError, match=says):
        compare(_runs(), pythons=("/no/such/python", "/no/such/python"), dry_run=True, **options)


def test_a_dry_run_plans_both_sides_in_default_trials():
    done = compare(_runs(), pythons=(sys.executable, sys.executable), dry_run=True, max_trials=9)
    lines = done.plan_lines()
    assert len(lines) == 3 and done.report is None
    assert lines[-1].startswith("2 scenarios, 20 processes (up to 36 while verdicts are open) (base ")
