"""`benchdb report --serving --cost-at N`: throughput and $ per million tokens at N tokens/s per user,
read along each configuration's front, over 40 real InferenceX rows (tests/fixtures/interop/inferencex)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import benchdb_cmd, cli, import_and_ingest, one_error_line
from conftest import db_rows as rows

from benchdb.reports.document import Filters
from benchdb.reports.serving_cost import cost_section, price_lists
from benchdb.warehouse import Warehouse

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "inferencex" / "benchmarks.json"
#: mi355x SGLang fp4 DeepSeek-R1 1k/1k: (interactivity, tokens/s per GPU) at concurrency 32 and 16
AT_32, AT_16 = (50.7076, 785.471), (66.0651, 512.926)
#: What tells the configurations apart here.
_KEY = ("hardware_name", "engine", "precision", "in_tokens", "out_tokens")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("cost")
    (root / "prices.yaml").write_text(
        "source: test prices (USD per GPU-hour)\nas_of: 2026-11\n"
        "accelerator_hour: {AMD Instinct MI355X: 1.50, NVIDIA B200: 1.73}\n"
    )
    return import_and_ingest(root, "inferencex", FIX), root / "prices.yaml"


def _rows(db, target: float) -> dict[tuple, dict]:
    warehouse, prices = db
    r = cli("report", "--serving", "--cost-at", str(target), "--prices", prices, "--format", "json", "--db", warehouse)
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["serving_cost"]
    return {(x["hardware_name"], x["engine"], x["precision"], x["in_tokens"], x["out_tokens"]): x for x in rows}


def test_between_two_front_points_the_reading_is_interpolated_and_costed(db):
    row = _rows(db, 60)[("mi355x", "sglang", "fp4", 1024, 1024)]
    assert row["how"] == "interpolated" and row["front_on"] == "total_per_gpu"
    assert AT_16[1] < row["total_per_gpu"] < AT_32[1]  # monotone between its neighbours
    assert row["usd_per_gpu_hour"] == 1.5
    assert row["usd_per_m_total"] == pytest.approx(1.5e6 / (row["total_per_gpu"] * 3600))
    assert row["usd_per_m_output"] == pytest.approx(1.5e6 / (row["output_per_gpu"] * 3600))
    # a lower interactivity target is served by more throughput per GPU: cheaper
    assert _rows(db, 55)[("mi355x", "sglang", "fp4", 1024, 1024)]["usd_per_m_total"] < row["usd_per_m_total"]


def test_at_a_point_it_is_measured_and_beyond_the_front_it_is_clamped_and_said(db):
    (exact,) = rows(
        db[0],
        "SELECT interactivity FROM serving_published_points WHERE hardware_name = 'mi355x' AND engine = 'sglang' "
        "AND precision = 'fp4' AND in_tokens = 1024 AND out_tokens = 1024 AND concurrency = 32",
    )
    measured = _rows(db, exact["interactivity"])[("mi355x", "sglang", "fp4", 1024, 1024)]
    assert measured["how"] == "measured" and measured["total_per_gpu"] == pytest.approx(AT_32[1], rel=1e-4)
    warehouse, prices = db
    r = cli("report", "--serving", "--cost-at", "500", "--prices", prices, "--db", warehouse, "--wide")
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.replace("> ", " ").split())
    assert "## Cost at 500 tokens/s per user" in r.output and "never reach 500 tokens/s per user" in said
    assert "| clamped |" in r.output and "| interpolated |" not in r.output
    assert "Prices: test prices (USD per GPU-hour), 2026-11." in said


def test_cost_at_needs_serving_and_a_positive_interactivity(db):
    warehouse, _ = db
    r = cli("report", "--sources", "--cost-at", "20", "--db", warehouse)
    assert r.exit_code != 0 and "--cost-at applies to --serving" in r.output
    r = cli("report", "--serving", "--cost-at", "0", "--db", warehouse)
    assert r.exit_code == 2 and "--cost-at" in r.output


def test_a_system_hour_price_is_shared_by_the_gpus_a_point_used(db, tmp_path):
    warehouse, _ = db
    prices = tmp_path / "system.yaml"
    prices.write_text("system_hour: {mi355x: 6.0}\n")  # the 4-GPU mi355x points: 1.50 per GPU-hour
    r = cli("report", "--serving", "--cost-at", "60", "--prices", prices, "--format", "json", "--db", warehouse)
    assert r.exit_code == 0, r.output
    (row,) = [
        x
        for x in json.loads(r.output)["serving_cost"]
        if x["hardware_name"] == "mi355x" and x["in_tokens"] == 1024 and x["out_tokens"] == 1024
    ]
    assert row["usd_per_gpu_hour"] == pytest.approx(1.5)


@pytest.fixture(scope="module")
def powered(tmp_path_factory):
    """The InferenceX rows with the app's measured ``avg_power_w`` on the mi355x SGLang 1k/1k points
    (600 W + 2 W per concurrent request: rows published before 2026 carry no power)."""
    root = tmp_path_factory.mktemp("powered")
    data = json.loads(FIX.read_text())
    for row in data:
        if (row["hardware"], row["framework"], row["isl"], row["osl"]) == ("mi355x", "sglang", 1024, 1024):
            row["metrics"]["avg_power_w"] = 600 + 2 * row["conc"]
        if row["hardware"] == "gb200":
            row["metrics"]["avg_power_w"] = 900
    (root / "benchmarks.json").write_text(json.dumps(data))
    (root / "sources").mkdir()
    for name, source, mi355x in (("a.yaml", "hyperscaler", 3.10), ("b.json", "neocloud", 1.50)):
        text = json.dumps({"source": source, "accelerator_hour": {"AMD Instinct MI355X": mi355x}})
        (root / "sources" / name).write_text(text)
    return import_and_ingest(root, "inferencex", root / "benchmarks.json"), root


def test_tokens_per_megawatt_come_from_measured_power_read_between_the_same_front_points(powered):
    from benchdb.analysis import system_power

    warehouse, root = powered
    r = cli("report", "--serving", "--cost-at", "60", "--format", "json", "--db", warehouse)
    assert r.exit_code == 0, r.output
    rows_ = json.loads(r.output)["serving_cost"]
    (row,) = [x for x in rows_ if x["hardware_name"] == "mi355x" and (x["in_tokens"], x["out_tokens"]) == (1024, 1024)]
    # read between the c=32 and c=16 points (664 W and 632 W): linear in interactivity, not splined
    (x32, x16) = AT_32[0], AT_16[0]
    watts = 664 + (632 - 664) * (60 - x32) / (x16 - x32)
    assert row["gpu_w"] == pytest.approx(watts, rel=1e-4)
    modelled = system_power.system_power("AMD Instinct MI355X", watts, 4)
    assert isinstance(modelled, system_power.SystemPower)
    assert row["facility_w_per_gpu"] == pytest.approx(modelled.facility_w, rel=1e-4)
    assert row["tokens_per_s_per_mw"] == pytest.approx(row["total_per_gpu"] * 1e6 / modelled.facility_w, rel=1e-6)
    assert row["output_tokens_per_s_per_mw"] == pytest.approx(row["output_per_gpu"] * 1e6 / modelled.facility_w)
    assert "extrapolated to a full chassis" in row["power_basis"]  # 4 GPUs of an 8-GPU platform
    assert row["power_from"] == "modelled, extrapolated"
    b200 = [x for x in rows_ if x["hardware_name"] == "b200"]
    assert b200 and all(x["tokens_per_s_per_mw"] is None for x in b200)  # no measured power: none
    r = cli("report", "--serving", "--cost-at", "60", "--db", warehouse, "--wide")
    said = " ".join(r.output.replace("> ", " ").split())
    assert "| tok/s/MW |" in r.output and "not a wall meter" in said
    assert "power not modelled: NVIDIA GB200: a rack-scale system" in said


def test_a_folder_of_price_sources_is_read_side_by_side(powered):
    warehouse, root = powered
    r = cli(
        "report", "--serving", "--cost-at", "60", "--prices", root / "sources", "--format", "json", "--db", warehouse
    )
    assert r.exit_code == 0, r.output
    got = {
        x["prices"]: x
        for x in json.loads(r.output)["serving_cost"]
        if x["hardware_name"] == "mi355x" and (x["in_tokens"], x["out_tokens"]) == (1024, 1024)
    }
    assert set(got) == {"hyperscaler", "neocloud"}
    assert got["hyperscaler"]["total_per_gpu"] == got["neocloud"]["total_per_gpu"]
    assert got["hyperscaler"]["usd_per_m_total"] == pytest.approx(got["neocloud"]["usd_per_m_total"] * 3.10 / 1.50)
    r = cli("report", "--serving", "--cost-at", "60", "--prices", root / "sources", "--db", warehouse, "--wide")
    assert (
        "| prices |" in r.output
        and "Price sources side by side, a row for each that prices a configuration: hyperscaler; neocloud." in r.output
    )
    r = cli("report", "--serving", "--prices", root / "sources", "--db", warehouse)
    assert (
        r.exit_code != 0
        and "holds 2 price sources: only --serving --cost-at (without --slo or other reports) reads" in r.output
    )
    r = cli("report", "--serving", "--prices", root / "sources" / "a.yaml", "--chassis", FIX, "--db", warehouse)
    assert r.exit_code != 0 and "--chassis applies to --serving --cost-at" in r.output
    # another section that reads prices would read one of the sources without saying which: refused
    for extra in (("--slo", "ttft:1s"), ("--optimal-hardware",)):
        r = cli("report", "--serving", "--cost-at", "60", "--prices", root / "sources", *extra, "--db", warehouse)
        assert r.exit_code != 0 and "(without --slo or other reports)" in r.output


def test_priced_rows_come_before_unpriced_ones_and_a_source_is_named_by_its_file(powered, tmp_path):
    warehouse, root = powered
    (tmp_path / "mine.yaml").write_text("accelerator_hour: {NVIDIA B200: 2.0}\n")  # no source field
    (tmp_path / "theirs.yaml").write_text("source: theirs\naccelerator_hour: {NVIDIA B200: 4.0}\n")
    r = cli("report", "--serving", "--cost-at", "60", "--prices", tmp_path, "--format", "json", "--db", warehouse)
    assert r.exit_code == 0, r.output
    one = [x for x in json.loads(r.output)["serving_cost"] if (x["in_tokens"], x["out_tokens"]) == (1024, 1024)]
    priced = [x["usd_per_gpu_hour"] is not None for x in one]
    assert priced == sorted(priced, reverse=True) and any(priced) and not all(priced)
    assert {x["prices"] for x in one if x["usd_per_gpu_hour"]} == {"mine.yaml", "theirs"}
    assert {x["prices"] for x in one if x["usd_per_gpu_hour"] is None} == {None}


def test_a_prices_folder_without_a_prices_file_is_one_line(powered, tmp_path):
    warehouse, _ = powered
    (tmp_path / "notes.txt").write_text("NVIDIA B200: 2.0\n")  # not a .yaml or .json file
    r = benchdb_cmd("report", "--serving", "--cost-at", "60", "--prices", str(tmp_path), "--db", str(warehouse))
    assert one_error_line(r, code=2) == f"benchdb: error: prices folder {tmp_path} holds no .yaml or .json prices file"


def test_a_malformed_chassis_file_is_one_line(powered, tmp_path):
    warehouse, _ = powered
    bad = tmp_path / "chassis.yaml"
    bad.write_text("pue: 1.3\nprofiles: []\n")
    r = benchdb_cmd("report", "--serving", "--cost-at", "60", "--chassis", str(bad), "--db", str(warehouse))
    assert one_error_line(r, code=2) == (
        f"benchdb: error: chassis model {bad}: pue must map air and liquid to a factor of 1 or more"
    )


def test_the_section_prices_each_configuration_by_its_accelerator_per_source(db):
    """The section itself (benchdb/reports/serving_cost.py), as the report builds it: a reading per
    configuration and price source, the sources' notes, and no price list without --prices."""
    warehouse, _ = db
    mi355x = {"AMD Instinct MI355X": 1.5}
    other = ({}, {"AMD Instinct MI355X": 3.0}, "other", False)
    f = Filters(cost_at=60, accelerator_prices=mi355x, prices_source="test prices", more_prices=(other,))
    assert [p[2] for p in price_lists(f)] == ["test prices", "other"]
    assert price_lists(Filters(cost_at=60)) == []
    with Warehouse(warehouse).reading() as con:
        section = cost_section(con, f)
        unpriced = cost_section(con, Filters(cost_at=60))
    assert section.name == "serving_cost" and section.title == "Cost at 60 tokens/s per user"
    key = ("mi355x", "sglang", "fp4", 1024, 1024)
    got = {r["prices"]: r for r in section.rows if tuple(r[k] for k in _KEY) == key}
    assert set(got) == {"test prices", "other"}
    for label, price in (("test prices", 1.5), ("other", 3.0)):
        row = got[label]
        assert (row["how"], row["front_on"], row["usd_per_gpu_hour"]) == ("interpolated", "total_per_gpu", price)
        assert AT_16[1] < row["total_per_gpu"] < AT_32[1]
        assert row["usd_per_m_total"] == pytest.approx(price * 1e6 / (row["total_per_gpu"] * 3600))
    assert (
        section.notes[0]
        == "Price sources side by side, a row for each that prices a configuration: test prices; other."
    )
    assert unpriced.notes[0].startswith("No --prices: throughputs only")
    assert all(r["usd_per_gpu_hour"] is None and r["prices"] is None for r in unpriced.rows)
