"""The HTML report's detail (benchdb.reports.drilldown): the results behind its figures in the order
they appear, each read back from a real warehouse with its samples per process and the `benchdb run`
command that measures it again, and an environment row in words."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_meta, make_run, write_file

from benchdb.reports import drilldown as dd
from benchdb.reports.document import Report, Section
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def _section(name: str, rows: list[dict]) -> Section:
    return Section(name, name, "", [], [], rows)


def test_the_results_behind_the_figures_in_order_once_each_trends_left_out(monkeypatch):
    sections = [
        _section("optimal", [{"best_result_id": "a", "runner_up_result_id": "b"}, {"best_result_id": "a"}]),
        _section("trends", [{"result_id": "t"}]),
        _section("latency", [{"result_id": "c", "best_result_id": None}]),
    ]
    rep = Report("w.duckdb", "now", {}, "", sections, measured_invalid=[{"result_id": "d"}, {"result_id": "b"}])
    assert dd.traced_ids(rep) == ["a", "b", "c", "d"]
    monkeypatch.setattr(dd, "DRILL_MAX", 2)
    assert dd.traced_ids(rep) == ["a", "b"]


def test_each_result_comes_with_its_samples_per_process_and_the_command_that_measures_it_again(tmp_path):
    run = make_run()
    values = np.random.default_rng(0).normal(1e-3, 1e-5, 12)
    write_file(tmp_path / "res", make_meta(run, model_id="matmul:64", batch_size=2), values, repeats=3)
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([tmp_path / "res"])
    with Warehouse(db).reading() as con:
        (rid,) = con.execute("SELECT result_id FROM results").fetchone()
        [row] = dd.drilldown(con, [rid])
        assert dd.drilldown(con, []) == []
    assert row["result_id"] == rid
    assert [len(s) for s in row["samples"]] == [4, 4, 4]
    assert sorted(v for s in row["samples"] for v in s) == pytest.approx(sorted(values))
    cmd = row["command"]
    assert (
        cmd.startswith("benchdb run ")
        and "--backend numpy" in cmd
        and "matmul:64" in cmd
        and "--batch-size 2 " in cmd
        and "--repeats 3" in cmd
    )


def test_an_environment_row_reads_as_words():
    row = dd.environment_row(
        {
            "software_json": '{"numpy": "2.1", "torch": {"cuda": "12"}, "duckdb": "1.1"}',
            "cores_physical": 2,
            "cores_logical": 4,
            "cpu_model": "Test CPU",
            "os": "Linux",
            "arch": "x86_64",
        }
    )
    assert (row["software"], row["cpu"], row["platform"]) == (
        "duckdb 1.1, numpy 2.1",
        "Test CPU (2/4 cores)",
        "Linux / x86_64",
    )
    bare = dd.environment_row({"software_json": "not json"})
    assert (bare["software"], bare["cpu"], bare["platform"]) == ("", None, None) and "software_json" not in bare
