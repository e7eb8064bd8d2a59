"""An MLPerf results repository's published tables read into rows (benchdb.interop.mlperf.tables): a
v6.x summary.json's rows under the v5.x names, keyed by their Location without its run folder; a bad
row is one of the table's errors while the others stand; an empty table is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchdb.interop.mlperf.tables import read_table
from benchdb.interop.writer import SourceError

pytestmark = pytest.mark.core

V61_ROWS = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_repo" / "v6.1-summary-rows.json"
ROOT = "closed/AMD/results/8xMI350X_2xEPYC_9655/wan-2.2-t2v-a14b"


def test_a_v6_summary_json_reads_as_rows_keyed_by_location():
    table = read_table(V61_ROWS)
    assert table.errors == [] and len(table.rows) == 4
    row = table.rows[f"{ROOT}/Offline"]  # "./closed/.../Offline/performance/run_1" in the file
    assert (row.model, row.scenario, row.result, row.units) == ("wan-2.2-t2v-a14b", "Offline", 0.0565013, "Samples/s")
    assert (row.per_node, row.nodes, row.total_accelerators, row.host_cpus_per_node) == (8, 1, 8, 2)
    assert row.accelerator == "AMD Instinct MI350X 288GB HBM3e" and row.version == "v6.1" and not row.inferred
    assert table.rows[f"{ROOT}/SingleStream"].units == "Latency (s)"


def test_a_bad_row_is_one_error_and_the_others_stand(tmp_path):
    doc = json.loads(V61_ROWS.read_text())
    rows = list(doc.values())
    rows[0]["Units"] = "Joules/s"
    rows[1]["Result"] = -3.0
    rows[2]["accelerators_per_node"] = "eight"
    path = tmp_path / "summary_results.json"
    path.write_text(json.dumps([{"Model": "no location"}, *rows]))  # a v5.x list
    table = read_table(path)
    assert len(table.rows) == 4 and len(table.errors) == 4, table.errors
    assert table.errors[0] == "row 1 has no Location"
    assert "unknown units 'Joules/s'" in table.errors[1] and "Latency (ms)" in table.errors[1]
    assert table.rows[f"{ROOT}/Offline"].result is None and table.rows[f"{ROOT}/Offline"].units is None
    assert "result -3.0 is not a positive number" in table.errors[2]
    assert table.errors[3].startswith("closed/AMD/results/8xMI355X_2xEPYC_9575F/wan-2.2-t2v-a14b/Offline: ")
    assert table.rows[f"{ROOT}/SingleStream"].result is None
    last = table.rows["closed/AMD/results/8xMI355X_2xEPYC_9575F/wan-2.2-t2v-a14b/SingleStream"]
    assert last.result == 16.124484197 and last.per_node == 8


def test_an_empty_table_is_refused_and_a_checkers_csv_is_read(tmp_path):
    empty = tmp_path / "summary.csv"
    empty.write_bytes(b"")
    with pytest.raises(SourceError, match="empty file"):
        read_table(empty)
    (tmp_path / "none.json").write_text("[]")
    with pytest.raises(SourceError, match="no rows"):
        read_table(tmp_path / "none.json")
    csv = tmp_path / "table.csv"
    csv.write_text(
        f"Location,Model,Scenario,Result,Units,a#,Nodes\n./{ROOT}/Offline/performance,m,Offline,2.5,Tokens/s,8,2\n"
    )
    (row,) = read_table(csv).rows.values()
    assert (row.location, row.result, row.units, row.per_node, row.nodes) == (f"{ROOT}/Offline", 2.5, "Tokens/s", 8, 2)
