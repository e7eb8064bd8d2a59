"""A bisect's answer in each form `benchdb bisect --format` writes (:mod:`benchdb.bisect.answer`),
from a search run with a judge that knows where the slow commit is."""

from __future__ import annotations

import json

import pytest

from benchdb.bisect import answer
from benchdb.bisect.search import Bisection, search
from benchdb.bisect.steps import Commit, Verdict

pytestmark = pytest.mark.core

COMMITS = [Commit(f"{i:040x}", f"change {i + 1}", "2026-11-01T10:00:00") for i in range(4)]


def _found() -> Bisection:
    def judge(base: Commit, tested: Commit) -> Verdict:
        slow = COMMITS.index(tested) >= 2
        return Verdict("regressed" if slow else "unchanged", 0.2 if slow else 0.0, 0.15 if slow else -0.01, 0.25)

    found = search(COMMITS, judge, Bisection("b1", "/repo", COMMITS[0], COMMITS[-1], out="results/bisect-b1"))
    found.reproduce = "benchdb bisect --good a --bad b"
    return found


def test_each_step_is_one_line_with_its_interval():
    step = _found().steps[0]
    assert answer.step_line(step) == (
        f"step 1: {COMMITS[3].short} against {COMMITS[0].short}: regressed +20.0% [+15.0%, +25.0%]"
    )


def test_the_terminal_answer_names_the_culprit_and_how_to_reproduce_it():
    lines = answer.text(_found()).splitlines()
    assert lines[0] == f"bisect b1 of /repo: {COMMITS[0].short}..{COMMITS[3].short}"
    assert f"culprit: {COMMITS[2].sha} change 3 (2026-11-01T10:00:00)" in lines
    assert lines[-2:] == [
        "reproduce: benchdb bisect --good a --bad b",
        "measurements: benchdb ingest results/bisect-b1 (tag bisect-b1)",
    ]


def test_markdown_and_json_hold_the_same_answer():
    found = _found()
    md = answer.markdown(found)
    assert md.startswith(f"### benchdb bisect b1: First slow commit: `{COMMITS[2].short}` change 3")
    assert md.count("\n| ") == 1 + len(found.steps) and "\n|---|" in md  # header, then a row a step
    doc = json.loads(answer.as_json(found))
    assert doc["status"] == "culprit" and doc["culprit"]["sha"] == COMMITS[2].sha and doc["exit_code"] == 0
