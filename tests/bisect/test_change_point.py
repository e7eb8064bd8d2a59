"""A change point as a bisect's start (benchdb/bisect/change_point.py): found by a prefix of its id
in a real warehouse's history, its commits either side, and the `benchdb run` options of its scenario."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import make_meta, make_run, write_file

from benchdb.bisect import change_point
from benchdb.errors import BenchdbError
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core

#: Runs 1-12, nightly; the work is 1.25x from run 8 on (commit c08).
RUNS, STEP = 12, 8


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[dict]]:
    """A warehouse whose matmul:64 series shifts at run 8 (runs with commits), and a matmul:32 series
    that shifts too but whose runs recorded no commit: (warehouse, its change points)."""
    root = tmp_path_factory.mktemp("history")
    rng = np.random.default_rng(5)
    for i in range(1, RUNS + 1):
        factor = 1.25 if i >= STEP else 1.0
        for model, commit in (("matmul:64", f"c{i:02d}"), ("matmul:32", None)):
            run = make_run(started_at=f"2026-11-{i:02d}T10:00:00+00:00", git_commit=commit)
            meta = make_meta(run, model_id=model, batch_size=2, input_shape="seq_len=16")
            write_file(root / "runs" / f"{model[-2:]}-{i}", meta, rng.normal(1e-3 * factor, 1e-5, 40))
    db = root / "w.duckdb"
    Warehouse(db).ingest([root / "runs"])
    with Warehouse(db).reading() as con:
        cur = con.execute("SELECT change_id, model_id FROM change_points ORDER BY model_id")
        points = [dict(zip(("change_id", "model_id"), r, strict=True)) for r in cur.fetchall()]
    assert [p["model_id"] for p in points] == ["matmul:32", "matmul:64"]
    return db, points


def test_a_change_point_is_found_by_a_prefix_with_the_commits_either_side(history):
    db, points = history
    cp = change_point.find(str(db), points[1]["change_id"][:8], wait_s=0)
    assert cp["change_id"] == points[1]["change_id"] and cp["model_id"] == "matmul:64"
    assert (cp["good_commit"], cp["bad_commit"]) == (f"c{STEP - 1:02d}", f"c{STEP:02d}")
    assert change_point.run_options(cp, Path("/repo")) == {
        "backend": "numpy",
        "models": ("matmul:64",),
        "device": "cpu",
        "threads": 1,
        "batch_sizes": (2,),
        "modes": ("eager",),
        "precisions": ("fp32",),
        "seq_lens": (16,),
    }


def test_no_match_several_matches_or_no_commit_is_refused(history):
    db, points = history
    with pytest.raises(BenchdbError, match="no change point 'zzz'; `benchdb report --regressions` lists them"):
        change_point.find(str(db), "zzz", wait_s=0)
    with pytest.raises(BenchdbError, match="change point id '' is ambiguous; give more of it"):
        change_point.find(str(db), "", wait_s=0)
    with pytest.raises(BenchdbError, match="its first run after the shift recorded no git commit; bisect with --good"):
        change_point.find(str(db), points[0]["change_id"], wait_s=0)


def test_a_user_bench_is_named_by_its_path_inside_the_repository(tmp_path):
    repo = tmp_path / "repo"
    (repo / "benches").mkdir(parents=True)
    (repo / "benches" / "bench_x.py").write_text("def bench_f():\n    pass\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cp = {
        "backend": "userbench",
        "model_id": "bench_x::bench_f",
        "settings": f'{{"bench": "{repo}/benches/bench_x.py::bench_f"}}',
        "device": "cpu",
        "threads": 1,
    }
    assert change_point.run_options(cp, tmp_path / "elsewhere") == {
        "benches": ("benches/bench_x.py::bench_f",),
        "device": "cpu",
        "threads": 1,
    }
    gone = str(tmp_path / "checkout" / "benches" / "gone.py") + "::bench_f"  # a worktree since removed
    assert change_point.bench_in_repo(gone, tmp_path / "checkout", "m") == "benches/gone.py::bench_f"
    with pytest.raises(BenchdbError, match="is gone and not inside .*; give --bench PATH"):
        change_point.bench_in_repo(gone, repo, "m")
    with pytest.raises(BenchdbError, match="the change point's bench m recorded no file; give --bench PATH"):
        change_point.bench_in_repo("", repo, "m")
