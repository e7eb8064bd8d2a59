"""One MLPerf results repository read once (benchdb/interop/mlperf/runs.py): each run as a benchdb result
and compared with its rows of the published tables, on the real v4.1 and v5.1 extracts; the round the
repository was submitted to, and a systems JSON that cannot be read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchdb.interop.mlperf import rules
from benchdb.interop.mlperf import system_desc as system
from benchdb.interop.mlperf.runs import Repository, RepositoryError, SystemsJsonError

pytestmark = pytest.mark.core

REPO = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_repo"
AMD = "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99/Offline"


def _loc(root: Path, location: str) -> system.Located:
    loc = system.locate(root / location / "performance" / "run_1" / system.SUMMARY)
    assert loc is not None
    return loc


def test_a_run_is_a_result_that_reproduces_its_published_row():
    repo = Repository(REPO / "v5.1")
    item, checked = repo.check(_loc(REPO / "v5.1", AMD))
    (row,) = checked.rows
    assert (checked.disagreements, checked.problems) == ([], [])
    assert (item.model_id, item.mode, item.primary_metric, item.precision) == (
        "mlperf:llama2-70b-99",
        "Offline",
        "tokens_per_s",
        "fp8",
    )
    assert item.options["accelerators"] == 8 and item.hardware["device_name"] == row.accelerator
    assert (item.summary_only, item.validity, item.percentile_method) == (True, "valid", "nearest_rank")
    stats = {(m, s): v for m, _, s, v in item.statistics}
    assert stats[("tokens_per_s", "published")] == row.result * rules.UNITS[row.units]
    assert stats[("tokens_per_s", "value")] == pytest.approx(row.result, rel=1e-4)
    assert item.settings["reproduces_table"] is True and item.settings["checked_against"] == ["summary_results.json"]
    assert repo.round_of(checked.rows) == "v5.1" and repo.run(_loc(REPO / "v5.1", AMD)).run_key == item.run_key


def test_a_table_row_the_logs_do_not_give_is_a_disagreement(tmp_path):
    tree = tmp_path / "v5.1"
    shutil.copytree(REPO / "v5.1", tree)
    table = json.loads((tree / "summary_results.json").read_text())
    for r in table:
        if r["Location"] == AMD:
            r["Performance_Result"] *= 2
    (tree / "summary_results.json").write_text(json.dumps(table))
    item, checked = Repository(tree).check(_loc(tree, AMD))
    (said,) = checked.disagreements
    assert said.startswith(f"summary_results.json: {AMD}: result (Tokens/s): table ")
    assert item.settings["reproduces_table"] is False and item.settings["source_disagreements"] == [said]


def test_the_round_is_the_repositorys_own_and_never_contradicted(tmp_path):
    v41 = Repository(REPO / "v4.1")
    assert v41.round_of([]) == "v4.1"  # no table: the README's title names it
    with pytest.raises(RepositoryError, match="--round v5.1 contradicts the repository's own round v4.1"):
        Repository(REPO / "v4.1", declared_round="v5.1").round_of([])
    bare = tmp_path / "results"
    bare.mkdir()
    with pytest.raises(RepositoryError, match="cannot tell which MLPerf round"):
        Repository(bare).round_of([])
    assert Repository(bare, declared_round="5.1").round_of([]) == "v5.1"


def test_a_run_whose_systems_json_is_missing_is_refused_naming_it(tmp_path):
    tree = tmp_path / "v4.1"
    shutil.copytree(REPO / "v4.1", tree)
    loc = _loc(tree, "closed/HPE/results/HPE_Cray_XD670_H100_SXM_80GBx8_TRT/gptj-99/Offline")
    loc.systems_json.unlink()
    with pytest.raises(SystemsJsonError) as caught:
        Repository(tree).check(loc)
    assert loc.systems_json.name in str(caught.value)
