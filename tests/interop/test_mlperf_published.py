"""A published MLPerf table checked against itself (benchdb.interop.mlperf.published): a row whose
platform name, accelerator counts or accuracy form disagree with its own fields is named, with what
disagrees. Rows copied unchanged from v6.1's summary.json (tests/fixtures/interop/mlperf_repo/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_repo"
V61_ROWS = FIX / "v6.1-summary-rows.json"  # four more rows of v6.1's summary.json, unchanged


def test_a_published_row_that_disagrees_with_itself_is_named():
    """v6.1's table: the MI355X server's platform name says 2 EPYC processors per node where its row
    gives 8 (its MI350X sibling's row gives 2 and agrees)."""
    from benchdb.interop.mlperf.published import table_problems
    from benchdb.interop.mlperf.tables import read_table

    table = read_table(V61_ROWS)
    assert table.errors == [] and len(table.rows) == 4
    mi355 = "closed/AMD/results/8xMI355X_2xEPYC_9575F/wan-2.2-t2v-a14b"
    assert table_problems(table) == {
        f"{mi355}/{scenario}": [
            "platform name '8xMI355X_2xEPYC_9575F' says 2 EPYC processor(s) per node; host_processors_per_node is 8"
        ]
        for scenario in ("Offline", "SingleStream")
    }


def test_counts_and_accuracy_forms_that_disagree_are_named(tmp_path):
    from benchdb.interop.mlperf.published import table_problems
    from benchdb.interop.mlperf.tables import read_table

    doc = json.loads(V61_ROWS.read_text())
    doc["2"]["Accuracy"] = "0.7028"  # the form one wan row of the published table has
    doc["3"]["Platform"] = "87xMI350X_2xEPYC_9655"  # 87 named, 8 given
    doc["11"]["total_accelerators"] = 9
    doc["12"]["Platform"] = "2x4xMI355X_2xEPYC_9575F"  # 2 nodes x 4 named, 1 x 8 given: 8 in total agrees
    doc["12"]["host_processors_per_node"] = 2
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(doc))
    problems = table_problems(read_table(path))
    root = "closed/AMD/results"
    assert problems == {
        f"{root}/8xMI350X_2xEPYC_9655/wan-2.2-t2v-a14b/Offline": [
            "accuracy '0.7028' names no metric; other wan-2.2-t2v-a14b rows write 'vbench_score: 70.1582'"
        ],
        f"{root}/8xMI350X_2xEPYC_9655/wan-2.2-t2v-a14b/SingleStream": [
            "platform name '87xMI350X_2xEPYC_9655' says 87 MI350X; the row gives 8 per node, 1 node(s), 8 in total"
        ],
        f"{root}/8xMI355X_2xEPYC_9575F/wan-2.2-t2v-a14b/Offline": [
            "total_accelerators 9, but accelerators per node 8 x nodes 1 = 8",
            "platform name '8xMI355X_2xEPYC_9575F' says 2 EPYC processor(s) per node; host_processors_per_node is 8",
        ],
    }
