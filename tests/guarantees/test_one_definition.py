"""Each concept is defined once and everything else is derived from it: a second, hand-written
definition beside the first is found here (it would drift from the first, as the dashboard's own
normalisation did from the terminal's)."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

SQL = REPO / "benchdb" / "sql"

#: ``b.y >= a.y`` and, further on in the same statement, ``b.y > a.y``: a Pareto dominance written out.
_DOMINANCE = re.compile(r"(\w+)\.(\w+)\s*>=\s*(\w+)\.\2\b(?:(?!;).){0,400}?\1\.\2\s*>\s*\3\.\2\b", re.DOTALL)


def _sql_files():
    return sorted(p for p in SQL.rglob("*.sql"))


@pytest.mark.core
def test_a_pareto_front_is_written_once_in_the_macros():
    """Every front (the serving frontier, the published frontier, the dashboard's systems view) asks
    bdb_beats whether one point beats another; none spells the dominance out again."""
    written = [
        f"{p.relative_to(REPO)}: {m.group(0)[:80]!r}"
        for p in _sql_files()
        if p.name != "macros.sql"
        for m in _DOMINANCE.finditer(re.sub(r"--[^\n]*", "", p.read_text(encoding="utf-8")))
    ]
    assert written == []
    assert "CREATE OR REPLACE MACRO bdb_beats(" in (SQL / "macros.sql").read_text(encoding="utf-8")
    users = {p.relative_to(SQL).as_posix() for p in _sql_files() if "bdb_beats(" in p.read_text(encoding="utf-8")}
    assert users >= {"views/90_serving.sql", "views/93_serving_published.sql", "dashboard/systems.sql"}
