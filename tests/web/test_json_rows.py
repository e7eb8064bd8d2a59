"""The server's answers are written by DuckDB (benchdb.web.json_rows), not value by value in Python: the
same documents once parsed as views.query's, for every type a view's column has and for every view of
a real warehouse."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import numpy as np
import pytest
from conftest import make_meta, make_run, write_file

from benchdb.warehouse import Warehouse
from benchdb.web import json_rows
from benchdb.web import views as api

pytestmark = pytest.mark.core

#: One column of each type the DuckDB path writes, with the values where writers differ.
VALUES = """
SELECT * FROM (VALUES
    ('plain', true, 1::TINYINT, 2::SMALLINT, 3::INTEGER, 9007199254740993::BIGINT, 4::UINTEGER,
     18446744073709551615::UBIGINT, 255::UTINYINT, 65535::USMALLINT, 0.1::DOUBLE, 0.1::FLOAT,
     TIMESTAMP '2026-11-01 10:00:00', DATE '2026-11-01'),
    ('quote " back \\ slash, é, 名, \u2028', false, NULL, NULL, NULL, -1, NULL, 0, 0, 0, 'nan'::DOUBLE, 'nan'::FLOAT,
     TIMESTAMP '2026-11-01 10:00:00.000123', NULL),
    (NULL, NULL, -128, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'inf'::DOUBLE, '-inf'::FLOAT,
     TIMESTAMP '1999-12-31 23:59:59.5', DATE '1970-01-01'),
    ('x', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1e-05, 3.4e38::FLOAT, NULL, NULL),
    ('y', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1e20, 1e-7::FLOAT,
     TIMESTAMP '2026-01-02 03:04:05', NULL),
    ('z', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, -0.0, NULL, NULL, NULL),
    ('w', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1.7976931348623157e308, NULL, NULL, NULL),
    ('v', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0.30000000000000004, NULL, NULL, NULL)
) t(s, b, i1, i2, i4, i8, u4, u8, u1, u2, d, f, ts, dt)
"""


def test_duckdb_writes_every_type_as_python_does():
    con = duckdb.connect()
    columns = [(row[0], row[1]) for row in con.execute(f"DESCRIBE {VALUES}").fetchall()]
    cur = con.execute(VALUES)
    assert {kind for _, kind in columns} == set(json_rows._AS_JSON), "a type the DuckDB path writes is not tried here"
    row_of = api._plain_row(cur.description, 0)
    python = json.loads(json.dumps([row_of(r) for r in cur.fetchall()], allow_nan=False))
    rows = con.execute(f"SELECT {json_rows.row_json(columns)} FROM ({VALUES}) q").fetchall()
    written = [json.loads(text) for (text,) in rows]
    assert written == python
    d, f, ts = (next(i for i, (c, _) in enumerate(columns) if c == name) for name in ("d", "f", "ts"))
    assert [r[d] for r in written[:3]] == [0.1, None, None]  # not finite: null, as plain() has it
    assert written[0][f] == float(np.float32(0.1)) and not math.isclose(written[0][f], 0.1, rel_tol=1e-12)
    assert [r[ts] for r in written[:3]] == [
        "2026-11-01T10:00:00+00:00",
        "2026-11-01T10:00:00.000123+00:00",
        "1999-12-31T23:59:59.500000+00:00",
    ]


def _write_run(folder: Path, day: int) -> None:
    run = make_run(started_at=f"2026-11-{day:02d}T10:00:00+00:00")
    for model in ("matmul:64", "matmul:128"):
        write_file(folder, make_meta(run, model_id=model), np.random.default_rng(day).normal(1e-3, 1e-5, 40))
    write_file(folder, make_meta(run, model_id="matmul:4096", status="oom", error='out of memory: "é"'), [])


def test_every_view_answers_as_query_does(tmp_path):
    for day in (1, 2, 3):
        _write_run(tmp_path / f"d{day}", day)
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([tmp_path / f"d{day}" for day in (1, 2, 3)])
    with Warehouse(db).reading() as con:
        results = api.query(con, "results", {})
        rec = dict(zip(results["columns"], results["rows"][0], strict=True))
        runs = api.query(con, "runs", {})
        run = dict(zip(runs["columns"], runs["rows"][0], strict=True))
        given = {
            "trends": {"series": rec["series_id"]},
            "samples": {"result": rec["result_id"]},
            "slo": {"ttft_ms": "1000"},
            **dict.fromkeys(
                ("compare", "compare_samples", "environment"), {"base": run["previous_run_id"], "cand": run["run_id"]}
            ),
        }
        asked = [(name, given.get(name, {})) for name in api.VIEWS]
        asked += [("results", {"model": "matmul:64"}), ("optimal", {"objective": "latency", "per": "accelerator"})]
        for name, params in asked:
            expected = json.loads(json.dumps(api.query(con, name, params), allow_nan=False))
            got = json.loads(json_rows.answer(con, name, params))
            if name == "compare_samples":  # its ORDER BY leaves a side's samples in no order (a histogram's)
                expected["rows"].sort(key=json.dumps)
                got["rows"].sort(key=json.dumps)
            assert got == expected, (name, params)
        assert expected["rows"]
    # the views the page opens with the most rows are written by DuckDB, not by the Python fallback
    assert all(json_rows._columns[name] is not None for name in ("results", "matrix", "flagged", "runs", "optimal"))
    assert json_rows._columns["samples"] is None
