"""What the quickstart's answer leaves out, and why (benchdb/quickstart.py). The whole command runs once,
end to end, in tests/cli/test_start.py (the most expensive test of the suite); this checks the
wording of its list on outcomes given here."""

from __future__ import annotations

import pytest

from benchdb.harness.scenario import Outcome, RunOptions, Scenario
from benchdb.plan.planning import PlanItem
from benchdb.quickstart import missing_from

pytestmark = pytest.mark.core


def _sc(model: str, backend: str, batch: int = 1) -> Scenario:
    return Scenario(model, backend, "cpu", "eager", "fp32", batch, "n=8", {}, {})


def test_a_model_one_backend_measured_and_a_model_without_a_valid_result_are_named():
    opts = RunOptions("numpy", ("a",))
    items = [
        PlanItem(opts, "compared", [_sc("compared", "numpy")]),
        PlanItem(opts, "alone", [_sc("alone", "numpy")]),
        PlanItem(opts, "alone2", [_sc("alone2", "numpy")]),
        PlanItem(opts, "broken", [_sc("broken", "numpy", b) for b in (1, 2, 4)]),
        PlanItem(RunOptions("pytorch", ("a",)), "compared", [_sc("compared", "pytorch")]),
    ]
    outcomes = [
        Outcome(_sc("broken", "numpy", 1), {}, status="error", error="boom"),
        Outcome(_sc("broken", "numpy", 2), {}, validity_reasons=["noisy"]),
        Outcome(_sc("broken", "numpy", 4), {}, validity_reasons=["noisy"]),
        Outcome(_sc("compared", "numpy"), {}),
    ]
    answer = [
        {"model_id": "compared", "candidates": 2},
        {"model_id": "alone", "candidates": 1},
        {"model_id": "alone2", "candidates": None},
    ]
    assert missing_from(items, outcomes, answer) == [
        "alone, alone2: only one backend measured them (nothing to compare)",
        "broken: no valid result (2 invalid, 1 error; the report says why)",
    ]
    assert missing_from(items[:2], [], answer[:2]) == ["alone: only one backend measured it (nothing to compare)"]
    assert missing_from(items[:1], [], answer[:1]) == []


def test_backend_chooses_among_the_suites_backends_and_the_rest_are_named_as_not_chosen(tmp_path):
    from conftest import db_rows

    from benchdb import quickstart
    from benchdb.errors import BenchdbError

    db = tmp_path / "w.duckdb"
    with pytest.raises(BenchdbError, match=r"^--backend nope is not a backend of the smoke suite; use one of numpy, "):
        quickstart.run(str(db), str(tmp_path / "out"), tmp_path / "r.html", backends=["numpy", "nope"])
    assert not db.exists() and not (tmp_path / "out").exists()  # refused before anything ran
    got = quickstart.run(
        str(db), str(tmp_path / "out"), tmp_path / "r.html", note=lambda _: None, repeats=1, backends=["numpy"]
    )
    assert got.left_out[0] == "pytorch, onnxruntime, openvino: not chosen (--backend)"
    assert {r["backend"] for r in db_rows(db, "SELECT DISTINCT backend FROM results")} == {"numpy"}
