"""Golden files of the terminal `report --optimal-hardware` and `check` on a fixed warehouse.

The warehouse is built from contract files with fixed run ids, timestamps and seeded samples, so
the output is the same on every machine; only the report's "generated <time>" is masked. The
output at 80 and 120 columns is compared with tests/fixtures/golden/*.txt.

To regenerate the golden files after an intended change of the output:

    BENCHDB_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/reports/test_terminal_golden.py

then read the diff (`git diff tests/fixtures/golden/`) before committing it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import REPO, cli, make_meta, make_run, write_file
from support.golden_warehouse import RUN_A, RUN_B, build_warehouse, lat

pytestmark = pytest.mark.core

GOLDEN = REPO / "tests" / "fixtures" / "golden"
WIDTHS = (80, 120)


@pytest.fixture(scope="module")
def golden_db(tmp_path_factory) -> Path:
    return build_warehouse(tmp_path_factory.mktemp("golden"))


def _run(golden_db: Path, width: int, *args: str) -> str:
    """The command's standard output at a terminal ``width``, run where the warehouse is (so its
    path, printed in the header, is the same everywhere), the generation time masked."""
    from click.testing import CliRunner

    from benchdb.cli import main

    here = os.getcwd()
    os.chdir(golden_db.parent)
    try:
        r = CliRunner().invoke(main, [*args, "--db", golden_db.name], env={"COLUMNS": str(width)})
    finally:
        os.chdir(here)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    # the time has a fixed length, so masking it leaves the wrapping as it was
    return re.sub(r"generated(\s+)\d{4}-\d\d-\d\d \d\d:\d\d UTC", r"generated\1YYYY-MM-DD hh:mm UTC", r.output)


CASES = {"optimal": ("report", "--optimal-hardware"), "check": ("check", "--baseline", RUN_A, "--candidate", RUN_B)}


def _compare(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("BENCHDB_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing: regenerate with BENCHDB_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from {path} (BENCHDB_UPDATE_GOLDEN=1 regenerates it)"


def _table_rows(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("|") and not set(ln) <= set("|- ")]


def _entries(text: str) -> list[str]:
    """The rows a table printed as a list (too wide for the terminal): each "- model ..." entry with
    its wrapped lines."""
    out: list[str] = []
    for ln in text.splitlines():
        if ln.startswith("- model "):
            out.append(ln)
        elif ln.startswith("  ") and out and out[-1].startswith("- model "):
            out[-1] += " " + ln.strip()
        elif out and not out[-1].endswith("\n"):
            out[-1] += "\n"
    return [e.strip() for e in out]


def _paragraph(text: str, start: str) -> str:
    """The paragraph that begins with ``start``, its wrapped lines joined."""
    i = text.index(start)
    return " ".join(text[i:].split("\n\n")[0].split())


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_terminal_output_matches_golden(golden_db, case, width):
    text = _run(golden_db, width, *CASES[case])
    # plain text: no HTML entity outside HTML
    for entity in ("&lt;", "&gt;", "&amp;"):
        assert entity not in text, f"{case} at {width}: {entity} in\n{text}"
    # never exponent notation in human output
    assert not re.search(r"\d\.?\d*e[+-]\d", text), text
    # every line fits the terminal (tables, and the lists of rows too wide for a table)
    for ln in text.splitlines():
        assert len(ln) <= width, f"{case} at {width}: {len(ln)} > {width}: {ln}"
    # no two rows read the same
    rows = _table_rows(text) + _entries(text)
    assert rows, text
    assert len(rows) == len(set(rows)), f"{case} at {width}: two rows read the same\n{text}"
    _compare(f"{case}_{width}", text)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reasons_are_grouped_with_counts(golden_db, case):
    """The three invalid tiny:llama results share their reasons: each text once, with its count."""
    text = _run(golden_db, 80, *CASES[case])
    assert text.count("min_iters 10") == 1, text
    if case == "check":
        assert "(3 rows:" in text, text


def test_one_count_per_thing(golden_db):
    """The header, the busy-machine line and the left-out note count the same things the same way."""
    text = _run(golden_db, 120, "report", "--optimal-hardware")
    head = re.search(r"(\d+) latest timing results", text)
    assert head, text
    busy = re.search(r"Busy machine:\*\* (\d+) of (\d+) latest timing results", text)
    left = re.search(r"Left out: (\d+) of (\d+) latest timing results", text)
    assert left and left.group(2) == head.group(1), text
    assert busy and busy.group(2) == head.group(1), text


def test_key_columns_kept_at_80(golden_db):
    """At 80 columns the optimal table keeps what tells two rows apart (the input of matmul's two
    shapes, the runner-up) and drops explanation instead."""
    text = _run(golden_db, 80, "report", "--optimal-hardware")
    entries = _entries(text)
    assert len(entries) == 6, text
    for e in entries:
        for col in ("model", "batch", "best", "verdict", "input"):
            assert f"{col} " in e, e
    assert sum("runner-up " in e for e in entries) == 3, entries
    wide = _run(golden_db, 120, "report", "--optimal-hardware")
    header = next(ln for ln in wide.splitlines() if ln.startswith("| model"))
    for col in ("model", "batch", "best", "verdict", "input", "runner-up"):
        assert f" {col} " in header, header


def test_check_never_compares_a_run_with_itself(tmp_path):
    res = tmp_path / "results"
    run = make_run(RUN_A)
    write_file(res, make_meta(run), lat(1, 1e-3))
    db = tmp_path / "one.duckdb"
    assert cli("ingest", res, "--db", db).exit_code == 0
    r = cli("check", "--baseline", "latest~1", "--candidate", "latest", "--db", db)
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    r = cli("check", "--baseline", RUN_A, "--candidate", RUN_A, "--db", db)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output


def test_check_never_lists_a_run_on_both_sides(tmp_path):
    """Run A measured numpy and onnxruntime, run B onnxruntime only: per hardware and backend,
    latest~1 is A (onnxruntime) and latest is B (onnxruntime) but also A (numpy, its only run). A
    run is never on both sides: A's numpy series, compared with nothing, is not the candidate's."""
    res = tmp_path / "results"
    a = make_run(RUN_A, started_at="2026-11-01T10:00:00+00:00")
    b = make_run(RUN_B, started_at="2026-11-02T10:00:00+00:00")
    write_file(res / "a", make_meta(a), lat(1, 1e-3), name="numpy.parquet")
    ort = dict(model_id="tiny:bert", backend="onnxruntime", mode="opt-all", input_shape="seq_len=32")
    write_file(res / "a", make_meta(a, **ort), lat(2, 1e-3), name="ort.parquet")
    write_file(res / "b", make_meta(b, **ort), lat(3, 1e-3), name="ort.parquet")
    db = tmp_path / "two.duckdb"
    assert cli("ingest", res, "--db", db).exit_code == 0
    r = cli("check", "--baseline", "latest~1", "--candidate", "latest", "--db", db, "--format", "json")
    import json

    body = json.loads(r.output)
    base = {x["run_id"] for x in body["sides"]["baseline"]["runs"]}
    cand = {x["run_id"] for x in body["sides"]["candidate"]["runs"]}
    assert base == {RUN_A} and cand == {RUN_B}, (base, cand)
    assert not body["only_candidate"], body["only_candidate"]


def test_check_lists_keep_the_whole_key(golden_db):
    """The candidate alone has tiny:bert openvino at fp16 and int8 (batch 1) and fp16 (batch 4): three
    entries, each naming its precision and batch, none repeated."""
    text = _run(golden_db, 120, "check", "--baseline", RUN_A, "--candidate", RUN_B)
    para = re.search(r"Only in the candidate \(3, not compared\): (.*)", _paragraph(text, "Only in the candidate"))
    assert para, text
    entries = para.group(1).split("; ")
    assert len(entries) == 3 == len(set(entries)), entries
    assert sum("fp16" in e for e in entries) == 2 and sum("int8" in e for e in entries) == 1, entries
