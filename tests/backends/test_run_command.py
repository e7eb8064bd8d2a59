"""The drill-down's reproduce line: the options a person would type, reading back to the same run."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

from benchdb import parsing
from benchdb.backends.core_options import recorded_config
from benchdb.backends.run_command import reproduce_command
from benchdb.harness.scenario import RunOptions, StopRule


def _line(rule: StopRule, **opts) -> str:
    run = RunOptions("numpy", ("matmul:256",), rule=rule, **opts)
    row = {
        "backend": "numpy",
        "device": "cpu",
        "model_id": "matmul:256",
        "batch_size": 1,
        "mode": "eager",
        "precision": "fp32",
        "input_shape": "n=256",
        "threads": 2,
        "repeats": run.repeats,
        "run_config": json.dumps({"runs": [recorded_config(run)]}),
    }
    return reproduce_command(row)


def _option(line: str, flag: str) -> str:
    args = shlex.split(line)
    return args[args.index(flag) + 1]


def test_durations_read_as_typed_and_back_to_the_same_setting():
    """The quickstart divides the suite's 200 ms by 3 processes: the line says 66.67ms, not
    0.06666666666666667s, and reads back within 0.01 %."""
    rule = replace(StopRule(), min_time_s=0.2 / 3, max_time_s=2 / 3)
    line = _line(rule, repeats=3, timeout_s=300.0)
    assert _option(line, "--min-time") == "66.67ms"
    assert _option(line, "--max-time") == "666.7ms"
    assert _option(line, "--timeout") == "300s"
    for flag, seconds in (("--min-time", 0.2 / 3), ("--max-time", 2 / 3), ("--timeout", 300.0)):
        assert abs(parsing.duration(_option(line, flag)) - seconds) <= 1e-4 * seconds
    assert "e-" not in line and "666666" not in line


def test_short_durations_stay_exact():
    line = _line(replace(StopRule(), min_time_s=0.2, max_time_s=0.5))
    assert _option(line, "--min-time") == "0.2s" and _option(line, "--max-time") == "0.5s"
