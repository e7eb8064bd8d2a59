"""benchdb.backends.core_declared: the core run options, each declared once, with its default read from
the harness field it sets, so a default changed on RunOptions or StopRule is the flag's default too."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from benchdb.backends.core_declared import CORE, CORE_BY_NAME, FIELD
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule

pytestmark = pytest.mark.core


def test_defaults_are_the_fields_they_set():
    run, rule = RunOptions("numpy", ()), StopRule()
    assert FIELD not in [o.default for o in CORE]
    for opt in CORE:
        if opt.target:
            owner, attr = opt.target.split(".", 1)
            assert owner == "rule" and opt.default == getattr(rule, attr), opt.name
        elif opt.name in RunOptions.__dataclass_fields__ and opt.name not in ("backend", "models"):
            value = getattr(run, opt.name)
            assert opt.default == (str(value) if isinstance(value, Path) else value), opt.name
    assert CORE_BY_NAME["threads"].default is None and CORE_BY_NAME["batch_sizes"].default == (1,)
    assert CORE_BY_NAME["min_time"].default == StopRule().min_time_s == 1.0
    assert CORE_BY_NAME["out"].default == "results"  # a path is shown as the text a user types


def test_each_option_is_declared_once_axes_first_and_sets_a_real_field():
    names = [o.name for o in CORE]
    assert len(names) == len(set(names)) == len(CORE_BY_NAME)
    axes = [o.axis for o in CORE]
    assert axes == sorted(axes, reverse=True) and sum(axes) == 7  # a config entry's lists expand in this order
    run_fields = {f.name for f in fields(RunOptions)}
    rule_fields = {f.name for f in fields(StopRule)}
    for opt in CORE:
        if opt.target:
            assert opt.target.split(".", 1)[1] in rule_fields, opt.name
        else:
            assert opt.name in run_fields or opt.name == "backend", opt.name
    # only co_runners, of the core options, is part of a scenario's identity
    assert [o.name for o in CORE if o.identity] == ["co_runners"]
