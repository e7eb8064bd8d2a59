"""`benchdb run --parallel` and `--ab ... --duet` on this machine, whatever its cores: workers on disjoint cores
(checked from inside the measuring children), overlap refused, placement and co-runners recorded,
a crash in one worker leaving the other's results whole; GPU workers through a stand-in device list.
What a run on this machine must do is derived from its topology as benchdb reads it
(benchdb.harness.topology: the cores this process may run on, by physical core and NUMA node)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import benchdb_cmd

from benchdb.errors import BenchdbError
from benchdb.harness import topology
from benchdb.schema import contract

#: This machine's cores as benchdb reads them; N physical cores this process may run on.
TOPO = topology.read()
N = len(TOPO.cores)
needs_two = pytest.mark.skipif(N < 2, reason="needs two physical cores this process may use")
#: --threads T with 2 workers of T cores needing more cores than there are
TOO_MANY = N // 2 + 1
#: parallel runs put their workers on cores of their own: these tests need every core, not their worker's one
pytestmark = pytest.mark.all_cpus

BENCH = """
import json, os, sys

OUT = os.environ["WHERE_OUT"]


def _where(name):
    def setup():
        with open(os.path.join(OUT, name + ".json"), "w") as fh:
            json.dump({"cpus": sorted(os.sched_getaffinity(0)), "dev": os.environ.get("CUDA_VISIBLE_DEVICES")}, fh)
        if name == "bench_crash":
            os._exit(3)
        return lambda: sum(range(2000))
    setup.__name__ = name
    return setup


bench_a, bench_b, bench_c, bench_d = (_where(n) for n in ("bench_a", "bench_b", "bench_c", "bench_d"))
"""


def _bench(tmp_path: Path, crash: bool = False) -> Path:
    text = BENCH + ("\nbench_crash = _where('bench_crash')\n" if crash else "")
    f = tmp_path / "bench_where.py"
    f.write_text(text)
    (tmp_path / "where").mkdir(exist_ok=True)
    return f


def _results(folder: Path) -> dict[str, dict]:
    out = {}
    for path in folder.rglob("*.parquet"):
        meta = contract.read_footer(path).metadata
        out[meta["scenario"]["model_id"].split("::")[1]] = meta
    return out


def _env(tmp_path):
    return {**os.environ, "WHERE_OUT": str(tmp_path / "where")}


@pytest.mark.core
def test_gpu_workers_get_one_device_each_through_a_stand_in():
    from benchdb.plan import parallel

    ws = parallel.device_workers("cuda", [0, 1, 2, 3], "auto")
    assert [w.env for w in ws] == [{"CUDA_VISIBLE_DEVICES": str(i)} for i in range(4)]
    assert [w.env for w in parallel.device_workers("rocm", [0, 1], "2")] == [
        {"HIP_VISIBLE_DEVICES": "0"},
        {"HIP_VISIBLE_DEVICES": "1"},
    ]
    with pytest.raises(BenchdbError, match="2 cuda device"):
        parallel.device_workers("cuda", [0, 1], "3")
    with pytest.raises(BenchdbError, match="no cuda device is visible"):
        parallel.device_workers("cuda", [], "auto")


@needs_two
def test_device_workers_reach_the_measuring_children(tmp_path, monkeypatch):
    """GPU workers stood in by their environment: each child sees only its worker's device variable."""
    from benchdb.harness.scenario import RunOptions
    from benchdb.harness.timing import StopRule
    from benchdb.plan import parallel
    from benchdb.plan.driver import run_plan
    from benchdb.plan.planning import build_plan

    bench = _bench(tmp_path)
    monkeypatch.setenv("WHERE_OUT", str(tmp_path / "where"))
    opts = RunOptions(
        backend="userbench",
        models=(str(bench),),
        threads=1,
        out=tmp_path / "out",
        rule=StopRule(min_time_s=0.05, warmup_iters=1, min_iters=3),
    )
    report = run_plan(
        build_plan([opts]), config={}, out=tmp_path / "out", workers=parallel.device_workers("cuda", [0, 1], "auto")
    )
    seen = {json.loads(f.read_text())["dev"] for f in (tmp_path / "where").glob("*.json")}
    assert seen == {"0", "1"}  # both workers measured, each with its own device
    recorded = {o.extra["placement"]["device_env"]["CUDA_VISIBLE_DEVICES"] for o in report.outcomes}
    assert recorded == {"0", "1"}


@needs_two
def test_two_single_thread_workers_on_core_0_and_core_1(tmp_path):
    bench = _bench(tmp_path)
    r = benchdb_cmd(
        "run",
        "--bench",
        str(bench),
        "--parallel",
        "2",
        "--threads",
        "1",
        "--min-time",
        "0.2",
        "--out",
        str(tmp_path / "out"),
        env=_env(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    first, second = topology.split(TOPO, 2, per=1)  # the first two physical cores, all their threads
    nodes = {first.text: list(first.nodes), second.text: list(second.nodes)}
    assert f"parallel: 2 workers: worker 0 (cores {first.text}); worker 1 (cores {second.text})" in r.stderr
    results = _results(tmp_path / "out")
    assert sorted(results) == ["bench_a", "bench_b", "bench_c", "bench_d"]
    for name, meta in results.items():
        placement = meta["scenario"]["extra"]["placement"]
        inside = json.loads((tmp_path / "where" / f"{name}.json").read_text())["cpus"]
        assert inside == topology.cpu_list(placement["cpus"])  # the child ran on its worker's core, only there
        assert meta["scenario"]["options"]["threads"] == 1 and meta["scenario"]["status"] == "ok"
        assert meta["scenario"]["options"]["co_runners"] == 1  # measured beside another: its own series
        assert placement["numa_nodes"] == nodes[placement["cpus"]] and placement["physical_cores"] == 1
    assert {m["scenario"]["extra"]["placement"]["cpus"] for m in results.values()} == {first.text, second.text}
    assert any(m["scenario"]["extra"]["placement"]["beside"] for m in results.values())  # co-runners named
    config = next(iter(results.values()))["run"]["config"]
    assert [w["cpus"] for w in config["parallel"]] == [first.text, second.text]
    from benchdb.warehouse import Warehouse

    assert Warehouse(tmp_path / "w.duckdb").ingest([tmp_path / "out"]).new == 4  # valid contract files


@needs_two
@pytest.mark.parametrize(
    "args, says",
    [
        (("--parallel", str(N + 1)), f"--parallel {N + 1}: this process may run on {N} physical core(s)"),
        (
            ("--parallel", "2", "--threads", str(TOO_MANY)),
            f"--parallel 2 --threads {TOO_MANY}: 2 workers of {TOO_MANY} physical core(s) need {2 * TOO_MANY}",
        ),
        (("--parallel", "two"), "--parallel two: give auto or a number of workers"),
        (("--parallel", "2", "--no-isolation"), "--parallel measures in separate processes"),
        (("--duet",), "--duet runs the two sides of --ab BASE CAND at the same time"),
    ],
)
def test_overlap_and_bad_parallel_options_are_refused_in_one_line(tmp_path, args, says):
    r = benchdb_cmd("run", "--backend", "numpy", "--model", "matmul:64", "--out", str(tmp_path / "out"), *args)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


@needs_two
def test_a_crash_in_one_worker_does_not_stop_the_other(tmp_path):
    bench = _bench(tmp_path, crash=True)
    r = benchdb_cmd(
        "run",
        "--bench",
        str(bench),
        "--parallel",
        "2",
        "--threads",
        "1",
        "--min-time",
        "0.2",
        "--repeats",
        "2",
        "--out",
        str(tmp_path / "out"),
        env=_env(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    results = _results(tmp_path / "out")
    assert results["bench_crash"]["scenario"]["status"] == "failed"
    assert "exited with code 3" in results["bench_crash"]["scenario"]["error"]
    for name in ("bench_a", "bench_b", "bench_c", "bench_d"):
        sc = results[name]["scenario"]
        assert sc["status"] == "ok" and len(sc["extra"]["placements"]) == 2  # one record per process
        table = pq.read_table(
            next(
                p
                for p in (tmp_path / "out").rglob("*.parquet")
                if contract.read_footer(p).metadata["scenario"]["model_id"].endswith(name)
            )
        )
        assert set(table.column("repeat").to_pylist()) == {0, 1}


@needs_two
@pytest.mark.serial  # its gate judges an A/A pair: a test beside it on those cores made one side +48 %
def test_duet_ab_runs_both_sides_at_once_on_mirrored_cores_swapping_them(tmp_path):
    bench = _bench(tmp_path)
    r = benchdb_cmd(
        "run",
        "--bench",
        f"{bench}::bench_a",
        "--ab",
        sys.executable,
        sys.executable,
        "--duet",
        "--repeats",
        "4",
        "--min-time",
        "0.2",
        "--out",
        str(tmp_path / "out"),
        "--db",
        str(tmp_path / "w.duckdb"),
        env=_env(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    assert "duet: both sides at once" in r.stderr and "check with:" in r.stdout
    files = {}
    for path in (tmp_path / "out").rglob("*.parquet"):
        meta = contract.read_footer(path).metadata
        files[meta["scenario"]["extra"]["ab_side"]] = meta
    assert sorted(files) == ["base", "cand"]
    base = [p["cpus"] for p in files["base"]["scenario"]["extra"]["placements"]]
    cand = [p["cpus"] for p in files["cand"]["scenario"]["extra"]["placements"]]
    # the two workers --duet takes: half the cores each (the sides' thread count, recorded, is that half)
    one, two = (s.text for s in topology.split(TOPO, 2, files["base"]["scenario"]["options"]["threads"]))
    assert len(base) == 4 and all({b, c} == {one, two} for b, c in zip(base, cand, strict=True))  # never shared
    assert sorted(base) == sorted([one, one, two, two])  # each side on each set in half the trials
    assert files["base"]["run"]["config"]["ab"]["duet"][0]["cpus"] == one
    assert files["base"]["scenario"]["options"] == files["cand"]["scenario"]["options"]
    assert files["base"]["scenario"]["options"]["co_runners"] == 1
    ingest, gate_cmd = r.stdout.split("check with: ", 1)[1].strip().split(" && ")
    assert str(tmp_path / "w.duckdb") in gate_cmd
    assert benchdb_cmd(*shlex.split(ingest)[1:]).returncode == 0
    gate = benchdb_cmd(*shlex.split(gate_cmd)[1:])
    assert gate.returncode in (0, 3), gate.stdout + gate.stderr  # judged (pass or undecided), not "nothing
    assert "1 unchanged" in gate.stdout or "inconclusive" in gate.stdout  # to compare": the sides are one series


@needs_two
def test_a_parallel_run_resumes_in_parallel(tmp_path):
    """Resuming a --parallel run measures what it left on as many workers again: the resumed
    results keep the identity (co_runners) and record their placement like the first ones."""
    bench = _bench(tmp_path)
    out = tmp_path / "out"
    r = benchdb_cmd(
        "run",
        "--bench",
        str(bench),
        "--parallel",
        "2",
        "--threads",
        "1",
        "--min-time",
        "0.1",
        "--out",
        str(out),
        env=_env(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    files = sorted(run_dir.glob("*.parquet"))
    for f in files[:2]:  # as if the run had been interrupted before them
        f.unlink()
    r = benchdb_cmd("run", "--resume", str(run_dir), env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "2 of 4 planned scenarios left" in r.stderr and "parallel: 2 workers" in r.stderr
    results = _results(out)
    assert len(results) == 4
    assert {m["scenario"]["options"]["co_runners"] for m in results.values()} == {1}
    assert all("placement" in m["scenario"]["extra"] for m in results.values())
    r = benchdb_cmd("run", "--resume", str(run_dir), "--parallel", "2")
    assert r.returncode == 2 and "leave out --parallel" in r.stderr
