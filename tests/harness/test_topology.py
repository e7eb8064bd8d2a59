"""How `benchdb run --parallel` splits this machine (benchdb.harness.topology), read from a stand-in
/sys: whole physical cores node by node, overlap refused, and big and small cores told apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchdb.errors import BenchdbError
from benchdb.harness import topology


def _fake_sys(root: Path, nodes: dict[int, list[tuple[int, ...]]], khz: dict[int, int] | None = None) -> Path:
    for node, cores in nodes.items():
        d = root / "devices/system/node" / f"node{node}"
        d.mkdir(parents=True)
        d.joinpath("cpulist").write_text(topology.cpu_text([c for core in cores for c in core]))
        for core in cores:
            for cpu in core:
                c = root / "devices/system/cpu" / f"cpu{cpu}"
                (c / "topology").mkdir(parents=True)
                (c / "topology/thread_siblings_list").write_text(topology.cpu_text(core))
                if khz:
                    (c / "cpufreq").mkdir()
                    (c / "cpufreq/cpuinfo_max_freq").write_text(str(khz[cpu]))
    return root


@pytest.mark.core
def test_split_takes_whole_cores_node_by_node_and_refuses_overlap(tmp_path):
    # 2 nodes x 4 cores x 2 hardware threads: cpu n and n+16 are siblings
    nodes = {0: [(i, i + 16) for i in range(4)], 1: [(i, i + 16) for i in range(4, 8)]}
    root = _fake_sys(tmp_path / "sys", nodes)
    topo = topology.read(root, allowed=set(range(8)) | set(range(16, 24)))
    assert len(topo.cores) == 8 and topo.nodes == {0: [0, 16, 1, 17, 2, 18, 3, 19], 1: [4, 20, 5, 21, 6, 22, 7, 23]}
    two = topology.split(topo, 2)
    assert [s.text for s in two] == ["0-3,16-19", "4-7,20-23"] and [s.nodes for s in two] == [(0,), (1,)]
    assert two[0].equivalence == two[1].equivalence and two[0].cores == 4
    four = topology.split(topo, 4)
    assert [s.text for s in four] == ["0-1,16-17", "2-3,18-19", "4-5,20-21", "6-7,22-23"]
    assert topology.auto_workers(topo, None) == 2 and topology.auto_workers(topo, 2) == 4
    with pytest.raises(BenchdbError, match="--parallel 9: this process may run on 8 physical core"):
        topology.split(topo, 9)
    assert [s.text for s in topology.split(topo, 2, per=1)] == ["0,16", "1,17"]  # --threads 1: one core each
    with pytest.raises(BenchdbError, match="3 workers of 3 physical core"):
        topology.split(topo, 3, per=3)
    # a big core and a small one are not equivalent sets
    little = _fake_sys(tmp_path / "sys2", {0: [(0,), (1,)]}, khz={0: 4_800_000, 1: 2_400_000})
    a, b = topology.split(topology.read(little, allowed={0, 1}), 2)
    assert a.equivalence != b.equivalence
