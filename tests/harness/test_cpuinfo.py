"""What a CPU is, as its fingerprint names it (benchdb.harness.cpuinfo): ARM parts by name, told
apart in the hardware id, and macOS's brand string."""

from __future__ import annotations

import pytest

from benchdb.harness import cpuinfo
from benchdb.schema import identity

pytestmark = pytest.mark.core


ARM_N1 = (
    "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes\nCPU implementer\t: 0x41\n"
    "CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n"
)


def test_arm_cpus_are_told_apart_by_part():
    n1 = cpuinfo.fingerprint_from(cpuinfo.read_cpuinfo(ARM_N1), system="Linux", machine="aarch64")
    v1 = cpuinfo.fingerprint_from(
        cpuinfo.read_cpuinfo(ARM_N1.replace("0xd0c", "0xd40")), system="Linux", machine="aarch64"
    )
    assert n1["device_name"] == "ARM Neoverse-N1" and v1["device_name"] == "ARM Neoverse-V1"
    assert n1["cpu_part"] == "0xd0c" and "asimd" in n1["flags"]
    same = {"cores_logical": 64, "memory_bytes": 128 * 2**30}
    assert identity.hardware_id({**n1, **same}) != identity.hardware_id({**v1, **same})
    mac = cpuinfo.fingerprint_from({}, system="Darwin", machine="arm64", mac_brand="Apple M2 Pro")
    assert mac["device_name"] == "Apple M2 Pro" and mac["vendor"] == "Apple"
