"""Each concept is defined once and everything else is derived from it: a second, hand-written
definition beside the first is found here (it would drift from the first, as the dashboard's own
normalisation did from the terminal's)."""

from __future__ import annotations

import ast
import dataclasses
import re

import pytest
from conftest import REPO

from benchdb.harness.scenario import Scenario
from benchdb.schema import contract, identity

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


@pytest.mark.core
def test_the_python_front_keeps_the_points_bdb_beats_keeps():
    """The reports' Python front (benchdb.analysis.frontier.pareto_front: the serving cost reading and the
    latency-throughput plot) keeps exactly the points no other point beats by the macros' bdb_beats, on
    random points with ties on either measure."""
    import random

    import duckdb

    from benchdb.analysis.frontier import pareto_front
    from benchdb.sql import install_macros

    con = duckdb.connect()
    install_macros(con)
    rng = random.Random(7)
    for trial in range(200):
        points = [(float(rng.randint(0, 12)), float(rng.randint(0, 12))) for _ in range(rng.randint(1, 25))]
        con.execute(
            "CREATE OR REPLACE TEMP TABLE p AS SELECT * FROM (SELECT unnest($1) AS x, unnest($2) AS y)",
            [[x for x, _ in points], [y for _, y in points]],
        )
        kept = con.execute(
            "SELECT DISTINCT x, y FROM p a WHERE NOT EXISTS (SELECT 1 FROM p b WHERE bdb_beats(b.y, b.x, a.y, a.x))"
        ).fetchall()
        assert {points[i] for i in pareto_front(points)} == set(kept), (trial, points)


# ------------------------------------------------------------------ the scenario key

#: Where a list of the key's columns is the definition itself, or history: the identity module, and the
#: migrations (written once, for the tables as they were).
_KEY_HOME = ("benchdb/schema/identity.py", "benchdb/store/migrations/")


def _copied_key(node: ast.AST) -> list[str] | None:
    """The key's columns a literal names by hand: a tuple, list or set of their names (or of pairs that
    start with them), or a dict that copies them one by one from one object (``{"model_id":
    x.model_id, ...}``, ``x["model_id"]``)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        # a name, or a name with its type: (("model_id", pa.string()), ...)
        firsts = [e.elts[0] if isinstance(e, ast.Tuple) and e.elts else e for e in node.elts]
        names = [e.value for e in firsts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    elif isinstance(node, ast.Dict):
        names = []
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                continue
            copied = (isinstance(v, ast.Attribute) and v.attr == k.value) or (
                isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Constant) and v.slice.value == k.value
            )
            if copied:
                names.append(k.value)
    else:
        return None
    named = [n for n in names if n in identity.SCENARIO_KEY]
    return named if "model_id" in named and len(set(named)) >= 5 else None


@pytest.mark.core
def test_the_scenario_key_is_listed_once_and_derived_everywhere_else():
    """identity.SCENARIO_KEY is the one list of the key's columns: the contract's row columns, ingest's
    key and batch rows, a change point's, an import's scenario, a comparison's and an export's are
    built from it (or from SCENARIO_FIELDS, the same without options_id); a hand-written copy is found."""
    copies = []
    for path in sorted((REPO / "benchdb").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith(_KEY_HOME):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = _copied_key(node)
            if named:
                copies.append(f"{rel}:{node.lineno}: {named}")
    assert copies == []
    assert identity.SCENARIO_FIELDS == tuple(k for k in identity.SCENARIO_KEY if k != "options_id")
    assert contract.ROW_KEY == ("run_id", "scenario_id", *identity.SCENARIO_FIELDS)
    assert [f.name for f in dataclasses.fields(Scenario)][: len(identity.SCENARIO_FIELDS)] == list(
        identity.SCENARIO_FIELDS
    )


def _columns(pattern: str, text: str) -> list[str]:
    return re.findall(pattern, re.sub(r"--[^\n]*", "", text))


@pytest.mark.core
def test_sql_that_lists_the_key_lists_scenario_key():
    """Where SQL must name the key's columns, it names exactly SCENARIO_KEY's: the row checks of ingest
    (each row's key against its file's), the change points' insert and batch scaling's series."""
    samples = (SQL / "queries" / "samples.sql").read_text(encoding="utf-8")
    assert _columns(r"\br\.(\w+) = k\.\1\b", samples) == list(contract.ROW_KEY)
    assert _columns(r"\br\.(\w+) IS DISTINCT FROM k\.\1\b", samples) == list(contract.ROW_KEY)
    upsert = (SQL / "queries" / "upsert_change_point.sql").read_text(encoding="utf-8")
    inserted = re.search(r"INSERT INTO change_points \(([^)]*)\)", upsert)
    assert inserted is not None
    columns = [c.strip() for c in inserted.group(1).split(",")]
    assert [c for c in columns if c in identity.SCENARIO_KEY] == list(identity.SCENARIO_KEY)
    scaling = (SQL / "views" / "50_batch_scaling.sql").read_text(encoding="utf-8")
    window = re.search(r"PARTITION BY ([^)]*?)\s+ORDER BY batch_size", scaling)
    assert window is not None
    series = {c.strip() for c in window.group(1).split(",")}
    assert series == (set(identity.SCENARIO_KEY) - {"batch_size"}) | {"hardware_id"}


# ------------------------------------------------------------------ the normalisations


def _js_sources() -> dict[str, str]:
    """The page's scripts (benchdb's own, not the vendored libraries), comments left out."""
    static = REPO / "benchdb" / "web" / "static"
    return {
        p.name: re.sub(r"//[^\n]*|/\*.*?\*/", "", p.read_text(encoding="utf-8"), flags=re.DOTALL)
        for p in sorted(static.glob("*.js"))
    }


#: What the serving charts say of their own axis (a throughput per accelerator, a front per system): a
#: fixed figure, not a normalisation to choose.
_SERVING_AXES = re.compile(r"(throughput|tokens/s) per accelerator|frontier per system")


@pytest.mark.core
def test_the_page_holds_no_list_of_the_normalisations():
    """The normalisations are the SQL's (bdb_normalisations): the dashboard's menu comes from the API and
    its figures are the API's, so no script names more than one of them (by its name as a string, its
    label or its unit), and none divides a figure by a power or a price itself."""
    from benchdb.reports.optimal import normalisations

    found = []
    for name, source in _js_sources().items():
        text = _SERVING_AXES.sub("", source)
        named = sorted(
            n.name
            for n in normalisations()
            if re.search(rf"""["'`]{n.name}["'`]""", text)
            or re.search(rf"(?<![\w-]){re.escape(n.label)}(?![\w-])", text)
            or (n.unit_suffix.strip() and n.unit_suffix in text)
        )
        if len(named) > 1:
            found.append(f"{name} names {named}")
        if re.search(r"value_per_watt|/ \(usd", text):
            found.append(f"{name} divides a figure by a power or a price")
    assert found == []
    assert len(normalisations()) >= 4 and normalisations()[0].name == "system"


# ------------------------------------------------------------------ the backends


@pytest.mark.core
def test_the_type_checker_checks_every_backend_the_package_declares():
    """benchdb/backends/conformance.py (read by mypy alone) names each of benchdb's own backends of the
    ``benchdb.backends`` entry points: a backend added there is checked against the protocol too."""
    from importlib.metadata import entry_points

    declared = [ep.value for ep in entry_points(group="benchdb.backends")]
    packages = {v.split(":")[0] for v in declared if v.startswith("benchdb.backends.")}
    tree = ast.parse((REPO / "benchdb" / "backends" / "conformance.py").read_text(encoding="utf-8"))
    checked = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and any(a.name == "backend" for a in node.names)
    }
    assert checked == packages
