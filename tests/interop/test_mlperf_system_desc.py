"""An MLPerf run's place in a results repository and the system its systems JSON describes
(benchdb/interop/mlperf/system_desc.py), on the real v4.1 and v5.1 extracts (tests/fixtures/interop/mlperf_repo)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchdb.interop.mlperf import system_desc as system
from benchdb.interop.writer import SourceError

pytestmark = pytest.mark.core

REPO = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_repo"
HPE = "closed/HPE/results/HPE_Cray_XD670_H100_SXM_80GBx8_TRT/gptj-99/Offline"


def test_a_runs_file_is_located_by_the_repositorys_layout():
    summary = REPO / "v4.1" / HPE / "performance" / "run_1" / system.SUMMARY
    loc = system.locate(summary)
    assert (loc.division, loc.submitter, loc.benchmark, loc.scenario_folder) == ("closed", "HPE", "gptj-99", "Offline")
    assert loc.root == (REPO / "v4.1").resolve() and loc.location == HPE
    assert loc.systems_json.name == "HPE_Cray_XD670_H100_SXM_80GBx8_TRT.json" and loc.systems_json.is_file()
    endpoints = REPO / "v6.1/closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Server"
    got = system.locate(endpoints / "performance" / system.ENDPOINTS)
    assert got is not None and got.scenario_folder == "Server"  # a v6.x endpoint run: no run_1
    assert system.locate(REPO / "v4.1" / "README.md") is None
    assert system.locate(REPO / "performance" / "run_1" / system.SUMMARY) is None  # too shallow to be a run


def test_a_systems_json_is_the_hardware_it_describes(tmp_path):
    loc = system.locate(REPO / "v4.1" / HPE / "performance" / "run_1" / system.SUMMARY)
    got = system.read_system(loc.systems_json, loc.root)
    assert (got.accelerator, got.per_node, got.nodes) == ("NVIDIA H100-SXM-80GB", 8, 1)
    hw = got.hardware
    assert (hw["kind"], hw["vendor"], hw["memory_bytes"], hw["cpu_sockets"]) == ("cuda", "NVIDIA", 80 * 10**9, 2)
    doc = json.loads(loc.systems_json.read_text())
    doc.pop("accelerators_per_node")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(doc))
    with pytest.raises(SourceError, match="accelerators_per_node"):
        system.read_system(broken)
    outside = tmp_path / "repo" / "closed" / "x.json"
    outside.parent.mkdir(parents=True)
    shutil.copy(loc.systems_json, tmp_path / "elsewhere.json")
    outside.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(SourceError):
        system.read_system(outside, tmp_path / "repo")  # linked out of the repository: refused


def test_counts_texts_and_precisions_as_the_checker_writes_them():
    assert system.count("8", "a#") == 8 and system.count(8.0, "a#") == 8 and system.count("N/A", "a#") is None
    for bad in ("eight", 1.5, -2, True):
        with pytest.raises(SourceError, match="a# is .*, not a count"):
            system.count(bad, "a#")
    assert system.count_or_none("eight") is None
    assert system.text("  NVIDIA   H100 ") == "NVIDIA H100" and system.text("n/a") is None
    assert system.precision_of("FP8, int8") == "fp8+int8" and system.precision_of("nvfp4") == "nvfp4"
    assert system.precision_of(None) == "unknown"
    assert system.finite_float("1.5") == 1.5 and system.finite_float("nan") is None
