"""benchdb.analysis.selection: what the gate's --baseline / --candidate selectors pick from a real
warehouse (latest~N per hardware and backend, run, commit, tag and time), the latest result of each
series among them, and the words for two selections that share nothing. The gate's verdicts on
what they pick are tests/analysis/test_gate.py."""

from __future__ import annotations

import pytest
from conftest import HARDWARE, make_meta, make_run, write_file

from benchdb.analysis import selection
from benchdb.errors import BenchdbError
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core

OTHER = {**HARDWARE, "vendor": "OtherVendor", "device_name": "Other CPU 5000", "cpu_model": "Other CPU 5000"}
#: Another machine of the same name as HARDWARE (more cores): another hardware id.
TWIN = {**HARDWARE, "cores_logical": HARDWARE["cores_logical"] * 2}

RUNS = {
    "a1": make_run(started_at="2026-10-01T10:00:00+00:00", host="a", git_commit="abc1230", tags=["nightly"]),
    "b1": make_run(started_at="2026-10-01T11:00:00+00:00", host="b"),
    "a2": make_run(started_at="2026-10-02T10:00:00+00:00", host="a", git_commit="def4560", tags=["pr-7"]),
    "b2": make_run(started_at="2026-10-02T11:00:00+00:00", host="b", tags=["pr-7"]),
    "t1": make_run(started_at="2026-10-03T10:00:00+00:00", host="t", tags=["twin"]),
    "t2": make_run(started_at="2026-10-03T11:00:00+00:00", host="t", tags=["threads"]),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("selection")
    files = [
        ("a1", "m1", HARDWARE, 1),
        ("a1", "m2", HARDWARE, 1),
        ("b1", "m1", OTHER, 1),
        ("a2", "m1", HARDWARE, 1),
        ("b2", "m1", OTHER, 1),
        ("t1", "m1", TWIN, 1),
        ("t2", "m1", TWIN, 2),
    ]
    for i, (run, model, hardware, threads) in enumerate(files):
        meta = make_meta(RUNS[run], model_id=model, hardware=hardware, options={"threads": threads})
        write_file(root / "res", meta, name=f"f{i}.parquet")
    db = root / "w.duckdb"
    summary = Warehouse(db).ingest([root / "res"])
    assert summary.new == len(files) and not summary.rejected
    return db


@pytest.fixture(scope="module")
def con(db):
    """One reading connection for the module's tests (opening one checks the warehouse's views)."""
    with Warehouse(db).reading() as con:
        yield con


def _pick(con, selector: str) -> selection.Selection:
    return selection.load(con, selector, selection.resolve_selector(con, selector))


def _runs(con, selector: str) -> list[str]:
    ids = {r["run_id"]: name for name, r in RUNS.items()}
    return [ids[r["run_id"]] for r in _pick(con, selector).runs()]


def test_each_selector_picks_its_runs(con):
    assert _runs(con, "latest") == ["a2", "b2", "t2"]  # per hardware and backend, its newest run
    assert _runs(con, "latest~1") == ["a1", "b1", "t1"]
    assert _runs(con, f"run:{RUNS['b1']['run_id'][:-4]}") == ["b1"]
    assert _runs(con, RUNS["b1"]["run_id"]) == ["b1"]  # a bare id is a run id
    assert _runs(con, "commit:abc") == ["a1"]
    assert _runs(con, "tag:pr-7") == ["a2", "b2"]
    assert _runs(con, "time:2026-10-02..2026-10-03") == ["a2", "b2"]
    assert _runs(con, "time:..2026-10-01T10:30") == ["a1"]
    assert _runs(con, "time:2026-10-03T10:30..") == ["t2"]


def test_the_latest_result_of_each_series_and_what_it_came_from(con):
    nightly = _pick(con, "tag:nightly")
    assert sorted(r["model_id"] for r in nightly.results.values()) == ["m1", "m2"]
    (run,) = nightly.runs()
    assert (run["run_id"], run["git_commit"], run["host"], run["results"]) == (RUNS["a1"]["run_id"], "abc1230", "a", 2)
    groups = _pick(con, "latest").by_hardware_backend()
    # two machines share a name: each label carries its hardware id's prefix
    assert sorted(g["label"] for g in groups) == sorted(
        ["Other CPU 5000"]
        + [f"Test CPU 9000 [{g['hardware_id'][:8]}]" for g in groups if g["hardware_name"] == "Test CPU 9000"]
    )
    assert [g["results"] for g in groups] == [1, 1, 1] and len({g["hardware_id"] for g in groups}) == 3


def test_latest_steps_back_per_hardware_and_backend_when_one_skipped_a_run(tmp_path):
    """pytorch ran on days 1-3, numpy on days 1 and 3 only: latest~1 is day 2 for pytorch, day 1 for numpy."""
    d = [make_run(started_at=f"2026-10-0{day}T10:00:00+00:00") for day in (1, 2, 3)]
    pt = {"backend": "pytorch", "options": {"threads": 1}}
    for i, (run, extra) in enumerate([(d[0], {}), (d[2], {}), (d[0], pt), (d[1], pt), (d[2], pt)]):
        write_file(tmp_path / "res", make_meta(run, model_id="m1", **extra), name=f"f{i}.parquet")
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([tmp_path / "res"])
    with Warehouse(db).reading() as con:
        base, cand = _pick(con, "latest~1"), _pick(con, "latest")
    got = {r["backend"]: (r["run_id"], cand.results[k]["run_id"]) for k, r in base.results.items()}
    assert got == {"numpy": (d[0]["run_id"], d[2]["run_id"]), "pytorch": (d[1]["run_id"], d[2]["run_id"])}


@pytest.mark.parametrize(
    "selector, says",
    [
        ("latest~x", "use latest or latest~N"),
        ("latest~-1", "use latest or latest~N"),
        ("latest~", "use latest or latest~N"),
        ("time:yesterday", "time ranges look like time:2026-11-01..2026-11-08"),
        ("branch:main", "use latest, latest~N, run:ID, commit:SHA, tag:NAME or time:FROM..TO"),
        ("tag:", "selector 'tag:' has nothing after 'tag:'"),
        ("tag:none", "selector 'tag:none' matches no run in the warehouse; list runs with `benchdb query"),
        ("latest~3", "matches no run in the warehouse (no hardware and backend has 4 runs)"),
    ],
)
def test_a_selector_that_picks_nothing_is_refused_with_what_to_write(con, selector, says):
    with pytest.raises(BenchdbError) as err:
        selection.resolve_selector(con, selector)
    assert says in str(err.value)


def test_two_selections_that_share_nothing_say_what_each_holds_and_why(con):
    twin, threads = _pick(con, "tag:twin"), _pick(con, "tag:threads")
    message = str(selection.nothing_shared(twin, threads))
    assert message.startswith(
        "nothing to compare: no series is on both sides: the same scenarios were measured with different "
        "options: threads. --baseline 'tag:twin' has 1 series from 1 run(s): 1 on Test CPU 9000/numpy; "
        "--candidate 'tag:threads' has 1 series from 1 run(s): 1 on Test CPU 9000/numpy. "
    )
    nightly, other = _pick(con, "tag:nightly"), _pick(con, f"run:{RUNS['b1']['run_id']}")
    assert ": the same scenarios" not in str(selection.nothing_shared(nightly, other))


def test_deployments_pair_the_same_scenario_on_other_hardware_one_to_one(con):
    mine, theirs = _pick(con, f"run:{RUNS['a2']['run_id']}"), _pick(con, f"run:{RUNS['b2']['run_id']}")
    ((cand_series, base_series),) = selection.deployment_pairs(mine, theirs).items()
    assert theirs.results[cand_series]["hardware_name"] == "Other CPU 5000"
    assert mine.results[base_series]["hardware_name"] == "Test CPU 9000"
    # the nightly run holds m1 and m2: m2 has no counterpart, m1 pairs
    assert len(selection.deployment_pairs(_pick(con, "tag:nightly"), theirs)) == 1


def test_a_metric_neither_side_measured_is_named_with_the_ones_they_did(con):
    base, cand = _pick(con, "latest~1"), _pick(con, "latest")
    selection.check_metric(con, "latency_s", base, cand)
    with pytest.raises(BenchdbError) as err:
        selection.check_metric(con, "nosuch", base, cand)
    assert str(err.value) == (
        "--metric 'nosuch' is not measured in the results of --baseline 'latest~1' or --candidate 'latest'; "
        "metrics there: latency_s"
    )
