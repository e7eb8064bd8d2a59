"""benchdb.hub.publish: the plan of a publish (each ingested contract file once, by its content; a
results file per hardware; the card and badges only when they changed), its push in one commit on
top of the dataset's head, and the contract files checked against what was ingested. Called
directly against a local fake Hub; `benchdb publish` end to end is tests/hub/test_hub.py."""

from __future__ import annotations

import pytest
from conftest import make_meta, make_run, write_file

from benchdb.errors import BenchdbError
from benchdb.hub import publish
from benchdb.hub.client import HubError
from benchdb.warehouse import Warehouse

REPO = "org/bench"


@pytest.fixture
def at_hub(hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", "hf_write")
    return hub


@pytest.fixture
def source(tmp_path):
    """A warehouse of 4 results of one model: 2 backends x 2 batch sizes."""
    run = make_run(started_at="2026-11-01T10:00:00+00:00")
    files = [
        write_file(tmp_path / "res", make_meta(run, model_id="org/bert", backend=b, batch_size=bs, input_shape="x=1"))
        for b in ("pytorch", "onnxruntime")
        for bs in (1, 4)
    ]
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([tmp_path / "res"])
    return db, files


def test_blob_ids_are_gits():
    assert publish.blob_oid(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert publish.blob_oid(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_a_plan_pushed_once_leaves_nothing_to_publish(at_hub, source):
    db, files = source
    plan = publish.plan(db, REPO)
    assert (plan.exists, plan.parent, plan.already, plan.new_results) == (False, None, 0, 4)
    kinds = {k: plan.count(k) for k in ("samples", "results", "card", "badge")}
    assert kinds == {"samples": 4, "results": 1, "card": 1, "badge": 2}
    assert plan.line().startswith(
        f"8 file(s), {sum(u.size for u in plan.uploads):,} bytes: 4 contract file(s) (4 result(s)), "
        "1 results file(s), 1 card, 2 badge file(s); 0 contract file(s) already there"
    )
    url = publish.push(plan)
    repo = at_hub.repos[("dataset", REPO)]
    assert url and len(repo.commits) == 1 and len(repo.files) == 8
    by_path = {u.path_in_repo: u for u in plan.uploads}
    for f in files:  # each contract file byte for byte, named by its content
        (path,) = [p for p, u in by_path.items() if u.source == f]
        assert path.startswith("samples/hardware=") and repo.files[path] == f.read_bytes()
    again = publish.plan(db, REPO)
    assert (again.exists, again.parent, again.already, again.uploads) == (True, repo.sha, 4, [])
    assert publish.push(again) is None and len(repo.commits) == 1


def test_a_contract_file_changed_or_gone_since_its_ingest_is_refused(at_hub, source):
    db, files = source
    files[0].write_bytes(files[0].read_bytes()[:-1] + b"\0")
    with pytest.raises(HubError, match=r"changed since it was ingested \(its SHA-256 differs\)"):
        publish.plan(db, REPO)
    files[0].unlink()
    with pytest.raises(HubError, match=r"was ingested but is gone: restore it"):
        publish.plan(db, REPO)
    with pytest.raises(BenchdbError, match=r"^nothing to publish: no ingested contract file matching --model"):
        publish.plan(db, REPO, models=["org/none"])
    assert ("dataset", REPO) not in at_hub.repos
