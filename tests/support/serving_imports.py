"""The recorded serving results of other tools (GuideLLM, AIPerf, vLLM, SGLang) and the medians an
import of one of them stored, shared by tests/interop/test_serving.py and test_serving_turns.py."""

from __future__ import annotations

from pathlib import Path

from conftest import db_rows as rows

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "serving"


def medians(db, input_shape, mode="%"):
    """metric -> (median, n) of the one imported result with ``input_shape`` (and ``mode``)."""
    got = rows(
        db,
        "SELECT m.metric, m.median, m.n FROM result_metrics m JOIN results r USING (result_id) "
        "WHERE r.input_shape = $s AND r.mode LIKE $m",
        {"s": input_shape, "m": mode},
    )
    return {g["metric"]: (g["median"], g["n"]) for g in got}
