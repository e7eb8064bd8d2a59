"""benchdb.backends.pytorch.devices: which device a run measures, how it is timed and synchronised,
with the CPU standing in for an accelerator."""

import pytest
import torch

from benchdb.backends.pytorch import backend as P
from benchdb.backends.pytorch import devices
from benchdb.errors import BenchdbError
from benchdb.harness.timing import HostTimer


def test_device_logic_with_cpu_stand_ins():
    cpu = torch.device("cpu")
    assert devices.sync_for(cpu) is None
    t = devices.timer_for(cpu)
    assert isinstance(t, HostTimer) and t.method == "host_clock"
    synced = HostTimer(sync=lambda: None, device="mps")
    assert synced.method == "host_clock+sync(mps)"
    assert devices.device_kind("cpu") == "cpu"
    assert devices.device_kind("mps") == "mps"
    assert P.parse_mode("eager") is None
    assert P.parse_mode("compile") == "default"
    assert P.parse_mode("compile:max-autotune") == "max-autotune"
    with pytest.raises(BenchdbError):
        devices.check_device("tpu")
