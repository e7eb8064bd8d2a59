"""The chassis power model (benchdb/analysis/system_power.py, chassis.yaml): an accelerator's power
to its share of chassis AC and facility power, checked against the arithmetic written out by hand."""

from __future__ import annotations

import pytest

from benchdb.analysis import system_power as sp
from benchdb.errors import BenchdbError

pytestmark = pytest.mark.core


def test_an_hgx_h100_at_tdp_is_the_components_fans_psu_loss_and_pue_worked_by_hand():
    # 8 x 700 W + 2 CPUs at 20 % between 100 W idle and 350 W TDP + 32 DIMMs x 8 W + 10 NICs x 25 W
    # + 10 drives x 10 W + 550 W board
    load = 8 * 700 + 2 * (100 + 0.2 * 250) + 32 * 8 + 10 * 25 + 10 * 10 + 550
    full = 8 * 700 + 2 * 350 + 32 * 8 + 10 * 25 + 10 * 10 + 550  # every accelerator and CPU at TDP
    dc = load + 1200 * (load / full) ** 3  # fans: the cube of the heat to move
    share = dc / (6 * 3300)  # of the PSUs' rated power: between Titanium's 20 % and 50 % points
    ac = dc / (0.94 + (0.96 - 0.94) * (share - 0.2) / 0.3)
    got = sp.system_power("NVIDIA H100 80GB HBM3", 700, 8)
    assert isinstance(got, sp.SystemPower) and got.cooling == "air" and not got.extrapolated
    assert got.ac_w == pytest.approx(ac / 8) and got.facility_w == pytest.approx(ac * 1.3 / 8)
    # 8.46 kW at the wall, between the GPUs alone and NVIDIA's 10.2 kW maximum for a DGX H100
    assert got.ac_w * 8 == pytest.approx(8_463.6, abs=0.1) and got.facility_w == pytest.approx(1_375.3, abs=0.1)


def test_power_rises_with_the_accelerators_and_liquid_cooling_takes_its_own_pue():
    watts = [sp.system_power("AMD Instinct MI300X", w, 8).facility_w for w in (200, 400, 600, 750)]  # type: ignore[union-attr]
    assert watts == sorted(watts) and len(set(watts)) == 4
    liquid = sp.system_power("AMD Instinct MI355X", 1000, 8)
    assert isinstance(liquid, sp.SystemPower) and liquid.cooling == "liquid" and liquid.pue == 1.1
    assert liquid.facility_w == pytest.approx(liquid.ac_w * 1.1)
    assert sp.system_power("AMD Instinct MI355X", 1000, 8, pue=1.25).facility_w == pytest.approx(liquid.ac_w * 1.25)  # type: ignore[union-attr]


def test_a_partial_chassis_is_extrapolated_and_said_so():
    four, eight, sixteen, unknown = (sp.system_power("NVIDIA B200", 800, n) for n in (4, 8, 16, None))
    assert four.extrapolated and not eight.extrapolated and not sixteen.extrapolated  # type: ignore[union-attr]
    assert unknown.extrapolated  # type: ignore[union-attr]  # a count not known to fill its chassis


@pytest.mark.parametrize(
    ("name", "watts", "why"),
    [
        ("NVIDIA GB200", 900, "rack-scale system"),  # GB200 is not B200: no whole-word match
        ("NVIDIA H100 PCIe", 300, "a PCIe card"),  # not the 700 W SXM module of an HGX
        ("NVIDIA H200 NVL", 500, "a PCIe card"),
        ("AMD EPYC 9654", 300, "no chassis profile for AMD EPYC 9654"),
        ("NVIDIA H100", 900, "above HGX H100 8-GPU (air)'s accelerator TDP (700 W)"),
        ("NVIDIA H100", None, "no accelerator power"),
    ],
)
def test_what_the_model_does_not_cover_is_a_reason_not_a_number(name, watts, why):
    got = sp.system_power(name, watts, 8)
    assert isinstance(got, str) and why in got


def test_a_sites_own_model_replaces_the_shipped_one(tmp_path):
    own = tmp_path / "chassis.yaml"
    own.write_text(
        "pue: {air: 1.5, liquid: 1.2}\npsu_efficiency: [[0.1, 0.9], [1.0, 0.9]]\nprofiles:\n"
        "  - {name: lab box, match: [H100], gpus: 4, gpu_tdp_w: 700, cooling: air, cpus: 1, cpu_tdp_w: 200,"
        " cpu_idle_w: 200, dimms: 0, dimm_w: 0, nics: 0, nic_w: 0, drives: 0, drive_w: 0, board_w: 0,"
        " fans_max_w: 0, psus: 2, psu_w: 2000}\n"
    )
    got = sp.system_power("H100", 500, 4, model=sp.load(own))
    assert isinstance(got, sp.SystemPower) and got.chassis == "lab box"
    assert got.ac_w == pytest.approx((4 * 500 + 200) / 0.9 / 4) and got.facility_w == pytest.approx(got.ac_w * 1.5)
    own.write_text(
        "profiles: [{name: x, match: [H100], cooling: water}]\npue: {air: 1.3, liquid: 1.1}\n"
        "psu_efficiency: [[0.5, 0.9]]\n"
    )
    with pytest.raises(BenchdbError, match="cooling is 'water', not air or liquid"):
        sp.load(own)


def test_tokens_per_megawatt():
    assert sp.tokens_per_s_per_mw(500.0, 1_000.0) == pytest.approx(500_000)
    assert sp.tokens_per_s_per_mw(500.0, None) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("pue: 1.3\nprofiles: []\n", "pue must map air and liquid"),
        ("pue: {air: 0.5, liquid: 1.1}\nprofiles: []\n", "pue is facility power over IT power: 1 or more"),
        ("pue: {air: 1.3, liquid: 1.1}\npsu_efficiency: 0.94\nprofiles: []\n", "[load share, efficiency] pairs"),
        ("pue: {air: 1.3, liquid: 1.1}\npsu_efficiency: [[0.1, 0.9], [0.5]]\nprofiles: []\n", "pairs"),
        (
            "pue: {air: 1.3, liquid: 1.1}\npsu_efficiency: [[0.5, 0.9]]\n"
            "profiles: [{name: x, match: [H100], cooling: [air]}]\n",
            "cooling is ['air'], not air or liquid",
        ),
    ],
)
def test_a_malformed_chassis_file_is_one_line_naming_the_field(tmp_path, text, why):
    own = tmp_path / "chassis.yaml"
    own.write_text(text)
    with pytest.raises(BenchdbError) as err:
        sp.load(own)
    assert why in str(err.value) and "\n" not in str(err.value) and str(own) in str(err.value)
