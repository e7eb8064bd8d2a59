"""`benchdb quickstart` as a new user sees it: one real run of the smoke suite (one process per
model), read for the order of what it prints and for what it says the answer does not compare, and why."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import benchdb_cmd

pytestmark = pytest.mark.slow

#: The smoke suite's models (benchdb/plan/suites/smoke.yaml).
SMOKE_MODELS = ("matmul:256", "tiny:bert", "tiny:vit", "tiny:llama")


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory) -> subprocess.CompletedProcess:
    home: Path = tmp_path_factory.mktemp("quickstart")
    return benchdb_cmd("quickstart", "--repeats", "1", "--db", "q.duckdb", cwd=home, timeout=600)


def test_quickstart_prints_ingest_then_answer_then_what_was_left_out_then_next_steps(quickstart):
    assert quickstart.returncode == 0, quickstart.stderr
    lines = quickstart.stdout.splitlines()

    def first(prefix: str) -> int:
        found = [i for i, ln in enumerate(lines) if ln.startswith(prefix)]
        assert found, f"no line starting {prefix!r} in:\n{quickstart.stdout}"
        return found[0]

    order = [first("ingested "), first("## Optimal hardware"), first("not compared in the answer"), first("report: ")]
    order.append(first("warehouse: "))
    assert order == sorted(order), quickstart.stdout


def test_quickstart_says_why_each_model_is_missing_from_the_comparison(quickstart):
    """A model that only one backend measured (tiny:llama: pytorch only; matmul:256: numpy only) is
    named with the reason; every model of the suite is in the answer or in that list."""
    out = quickstart.stdout
    start = out.index("\nnot compared in the answer, and why:\n")
    left = out[start : out.index("\nreport: ", start)]
    answer = out[out.index("## Optimal hardware") : start]
    only_one = [ln for ln in left.splitlines() if "only one backend measured" in ln]
    assert len(only_one) == 1, left
    assert "matmul:256" in only_one[0] and "tiny:llama" in only_one[0], left
    assert only_one[0].rstrip().endswith("(nothing to compare)")
    # a table, or one entry per row where the table would not fit the terminal (a measured tail flag
    # or a wide margin widens a row)
    named = [m for m in SMOKE_MODELS if f"| {m} |" in answer or f"- model {m};" in answer]
    compared = [m for m in named if m not in left]
    assert sorted(compared + [m for m in SMOKE_MODELS if m in left]) == sorted(SMOKE_MODELS), out
