"""`benchdb report --sources`: per source and MLPerf round, what the warehouse holds and how much of
what was published reproduces the publisher's own table, over real MLPerf files (v4.1, v5.1 with an
open-division run, v6.1) beside a benchdb measurement."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from conftest import cli, make_meta, make_run, write_file

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_repo"


def _warehouse(tmp_path: Path, *trees: Path) -> Path:
    out, db = tmp_path / "imported", tmp_path / "w.duckdb"
    for tree in trees:
        r = cli("import", "mlperf", tree, "--out", out)
        assert r.exit_code == 0, r.output
    write_file(tmp_path / "measured", make_meta(make_run()), np.random.default_rng(1).normal(1e-3, 1e-6, 40))
    r = cli("ingest", out, tmp_path / "measured", "--db", db)
    assert r.exit_code == 0, r.output
    return db


def test_sources_counts_results_per_source_and_round_and_what_reproduces(tmp_path):
    tree = tmp_path / "v6.1"
    shutil.copytree(FIX / "v6.1", tree)
    table = json.loads((tree / "summary.json").read_text())
    server = next(k for k, r in table.items() if r["Location"].endswith("/deepseek-r1/Server/performance/run_1"))
    table[server]["Result"] *= 1.01  # crafted: the table's figure 1 % off the logs'
    (tree / "summary.json").write_text(json.dumps(table))
    db = _warehouse(tmp_path, FIX / "v4.1", FIX / "v5.1", FIX / "v5.1-open", tree)
    r = cli("report", "--sources", "--format", "json", "--db", db)
    assert r.exit_code == 0, r.output
    got = {(row["source"], row["round"]): row for row in json.loads(r.output)}
    fields = ("results", "systems", "checked", "reproduced", "with_disagreements")
    assert {k: tuple(v[f] for f in fields) for k, v in got.items()} == {
        ("benchdb", None): (1, 1, 0, 0, 0),
        ("mlperf-loadgen", "v4.1"): (2, 1, 0, 0, 0),  # no published table in the v4.1 repository
        ("mlperf-loadgen", "v5.1"): (7, 4, 7, 7, 0),
        ("mlperf-loadgen", "v6.1"): (2, 1, 2, 1, 1),
    }
    r = cli("report", "--sources", "--db", db)
    assert r.exit_code == 0, r.output
    assert "| source | round | results | runs | systems | accelerator types | checked | reproduced |" in r.output
    assert "| mlperf-loadgen | v6.1 | 2 | 2 | 1 | 1 | 2 | 1 | 1 |" in r.output
    said = " ".join(r.output.replace("> ", " ").split())
    assert "9 published results checked against the publisher's own table, 8 reproduce it; 1 result with" in said
    assert "--sources" not in cli("report", "--all", "--format", "json", "--db", db).output


def test_sources_is_chosen_by_name_and_follows_the_model_filter(tmp_path):
    db = _warehouse(tmp_path, FIX / "v4.1")
    r = cli("report", "--sources", "--model", "mlperf:gptj-99", "--format", "json", "--db", db)
    assert r.exit_code == 0, r.output
    assert [(row["source"], row["round"], row["results"]) for row in json.loads(r.output)] == [
        ("mlperf-loadgen", "v4.1", 2)
    ]
