"""What this machine has (benchdb.harness.hardware): the threads a run takes by default, within its
affinity and its cgroup's CPU quota."""

from __future__ import annotations

import pytest

from benchdb.harness import hardware

pytestmark = pytest.mark.core


def test_default_threads_respect_affinity_and_cgroup_quota(tmp_path):
    assert hardware.default_threads(physical=8, affinity=8, quota=None) == 8
    assert hardware.default_threads(physical=8, affinity=3, quota=None) == 3
    assert hardware.default_threads(physical=8, affinity=8, quota=2.5) == 2
    assert hardware.default_threads(physical=8, affinity=8, quota=0.5) == 1
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert hardware.cgroup_cpu_quota(str(tmp_path)) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert hardware.cgroup_cpu_quota(str(tmp_path)) is None
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("200000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert hardware.cgroup_cpu_quota(str(v1)) == 2.0
    fp = hardware.cpu_fingerprint()
    assert "cpu_affinity" in fp and "cgroup_cpu_quota" in fp
