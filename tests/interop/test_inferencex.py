"""`benchdb import inferencex`: InferenceX's published API rows (tests/fixtures/interop/inferencex,
real rows) become summary-only serving points with their system, parallelism and the GPUs they used;
every figure is the row's own; `report --serving` lists each system's front of throughput per GPU
against interactivity, marked as published summaries. Bad input costs only its file, on one line."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import benchdb_cmd, cli, import_and_ingest
from conftest import db_rows as rows

from benchdb.interop import inferencex

pytestmark = pytest.mark.core

FIXTURE = Path(__file__).parents[1] / "fixtures" / "interop" / "inferencex" / "benchmarks.json"
ROWS = json.loads(FIXTURE.read_text())


def _gpus(r: dict) -> int:
    """The GPUs InferenceX's process_result.py divided tput_per_gpu by."""
    return r["num_prefill_gpu"] + r["num_decode_gpu"] if r["is_multinode"] else r["decode_tp"]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return import_and_ingest(tmp_path_factory.mktemp("ix"), "inferencex", FIXTURE)


def test_every_row_is_one_summary_only_point_with_the_rows_own_figures(db):
    assert len(ROWS) == 40
    (n,) = rows(db, "SELECT count(*) AS n, count(DISTINCT hardware_id) AS systems FROM results")
    assert n == {"n": 40, "systems": 6}
    stats = rows(
        db,
        "SELECT r.input_shape, r.accelerators, r.precision, h.system_name, s.metric, s.statistic, "
        "s.unit, s.value, json_extract_string(r.settings, '$.run_url') AS run_url "
        "FROM source_statistics s JOIN results r USING (result_id) JOIN hardware h USING (hardware_id)",
    )
    got: dict[tuple, float] = {}
    for s in stats:
        got[
            (
                s["system_name"],
                s["input_shape"],
                s["accelerators"],
                s["precision"],
                s["run_url"],
                s["metric"],
                s["statistic"],
                s["unit"],
            )
        ] = s["value"]
    names = {"ttft": "ttft_s", "tpot": "tpot_s", "itl": "itl_chunk_s", "e2el": "e2e_s"}
    stat = {"mean": "mean", "median": "median", "std": "stddev", "p99": "p99"}
    per_gpu = {
        "tput_per_gpu": "total_throughput_per_gpu",
        "output_tput_per_gpu": "output_throughput_per_gpu",
        "input_tput_per_gpu": "input_throughput_per_gpu",
    }
    expected: dict[tuple, float] = {}
    for r in ROWS:
        where = (
            r["hardware"],
            f"in={r['isl']},out={r['osl']},concurrency={r['conc']}",
            _gpus(r),
            r["precision"],
            r["run_url"],
        )
        for key, value in r["metrics"].items():
            s, _, fig = key.partition("_")
            if key in per_gpu:
                expected[(*where, per_gpu[key], "value", "tokens/s")] = value
            elif fig == "intvty":
                if s == "median":  # the others are 1 / another TPOT statistic
                    expected[(*where, "interactivity", "median", "tokens/s")] = value
            else:
                expected[(*where, names[fig], stat[s], "s")] = value
    assert got == expected  # every figure exactly as published, nothing added
    summ = rows(
        db,
        "SELECT DISTINCT s.summary_only, s.tool, s.percentile_method, r.n, r.median, r.mode "
        "FROM results r JOIN result_sources s USING (result_id)",
    )
    assert summ == [
        {
            "summary_only": True,
            "tool": "InferenceX",
            "percentile_method": "linear",
            "n": 0,
            "median": None,
            "mode": "completions",
        }
    ]
    assert rows(db, "SELECT count(*) AS n FROM samples") == [{"n": 0}]


def test_systems_gpus_and_parallelism_follow_the_rows(db):
    res = rows(
        db,
        "SELECT r.input_shape, r.batch_size, r.device, r.backend, r.model_id, r.accelerators, "
        "r.parallelism, r.options, h.kind, h.vendor, h.device_name, h.system_name "
        "FROM results r JOIN hardware h USING (hardware_id)",
    )
    # B200 TensorRT-LLM, one node, TP 8 EP 8: the row's num_*_gpu says 64 (the ETL's tp * ep); it ran on 8.
    b200 = [r for r in res if r["system_name"] == "b200" and json.loads(r["options"])["engine"] == "tensorrt-llm"]
    assert len(b200) == 5 and {r["accelerators"] for r in b200} == {8}
    r0 = next(r for r in b200 if r["input_shape"] == "in=1024,out=1024,concurrency=16")
    assert (r0["kind"], r0["vendor"], r0["device_name"], r0["device"], r0["batch_size"], r0["model_id"]) == (
        "cuda",
        "NVIDIA",
        "NVIDIA B200",
        "remote:b200",
        16,
        "dsr1",
    )
    assert json.loads(r0["parallelism"]) == {
        "tp": 8,
        "ep": 8,
        "dp_attention": False,
        "disaggregated": False,
        "nodes": 1,
    }
    # GB200 Dynamo SGLang fp8, disaggregated over 48 prefill + 24 decode GPUs in 6 + 1 workers.
    gb = next(r for r in res if r["input_shape"] == "in=8192,out=1024,concurrency=1024")
    opts = json.loads(gb["options"])
    assert (gb["system_name"], gb["backend"], gb["accelerators"]) == ("gb200", "dynamo-sglang", 72)
    assert opts["accelerators_by_phase"] == {"prefill": 48, "decode": 24} and opts["multinode"] is True
    assert json.loads(gb["parallelism"]) == {
        "disaggregated": True,
        "prefill": {"tp": 1, "ep": 1, "dp_attention": True, "workers": 6},
        "decode": {"tp": 1, "ep": 1, "dp_attention": True, "workers": 1},
    }
    mtp = [json.loads(r["options"]) for r in res if json.loads(r["options"]).get("speculative_decoding")]
    assert len(mtp) == sum(r["spec_method"] == "mtp" for r in ROWS) == 6
    amd = {(r["kind"], r["vendor"], r["device_name"]) for r in res if r["system_name"] == "mi355x"}
    assert amd == {("rocm", "AMD", "AMD Instinct MI355X")}
    # Every row's GPU count divides its published figures consistently: total = input + output parts.
    for row in ROWS:
        m = row["metrics"]
        if "input_tput_per_gpu" in m:
            p, d = (row["num_prefill_gpu"], row["num_decode_gpu"]) if row["is_multinode"] else (1, 1)
            total = m["tput_per_gpu"] * (p + d if row["is_multinode"] else 1)
            assert total == pytest.approx(m["input_tput_per_gpu"] * p + m["output_tput_per_gpu"] * d, rel=1e-9)


def test_report_serving_lists_each_systems_front_per_gpu_marked_published(db):
    r = cli("report", "--serving", "--db", db, "--format", "json")
    assert r.exit_code == 0, r.output
    sections = json.loads(r.output)
    front = sections["serving_published_frontier"]
    assert sections["serving_points"] == [] and "serving_sources" not in sections
    assert {p["hardware_name"] for p in front} == {"h100", "h200", "b200", "b300", "gb200", "mi355x"}
    by = {
        (
            p["hardware_name"],
            p["engine"],
            p["precision"],
            p["speculative_decoding"],
            p["in_tokens"],
            p["out_tokens"],
            p["concurrency"],
        ): p
        for p in front
    }
    # MI355X SGLang fp4 at 1k/1k: every concurrency is on its front (throughput rises, interactivity falls).
    mi = sorted((k[-1], v) for k, v in by.items() if k[:2] == ("mi355x", "sglang") and k[5] == 1024)
    assert [c for c, _ in mi] == [4, 8, 16, 32, 64]
    row64 = next(x for x in ROWS if x["hardware"] == "mi355x" and x["osl"] == 1024 and x["conc"] == 64)
    assert mi[-1][1]["total_throughput_per_gpu"] == row64["metrics"]["tput_per_gpu"]
    assert mi[-1][1]["interactivity"] == row64["metrics"]["median_intvty"]
    assert mi[-1][1]["accelerators"] == 4
    # GB200 Dynamo SGLang fp4 1k/1k: c=4 (82.7 tok/s/GPU at 133.4 tok/s/user) is beaten by c=8 (165.4 at 133.9).
    gb = {k[-1] for k in by if k[:3] == ("gb200", "dynamo-sglang", "fp4")}
    assert gb == {8, 32, 64}
    assert by[("gb200", "dynamo-sglang", "fp4", None, 1024, 1024, 8)]["on_overall_front"] is True
    # A system's front spans its deployments: B300's two disaggregated layouts are both on it.
    b300 = by[("b300", "dynamo-trt", "fp4", None, 1024, 1024, 4611)]
    assert (b300["accelerators"], b300["total_throughput_per_gpu"]) == (22, 11411.488987501316)
    assert ("b300", "dynamo-trt", "fp4", None, 1024, 1024, 6) in by
    assert all(p["summary_only"] is True and p["measured_by"] == "InferenceX" for p in front)
    assert not [k for k in front[0] if "_ci_" in k]  # a published summary has no interval
    assert len(front) == 37
    # The terminal's Markdown: the section, its rows by system with GPUs and per-GPU throughput, the mark.
    md = cli("report", "--serving", "--db", db, "--wide")
    assert md.exit_code == 0, md.output
    lines = md.output.splitlines()
    assert "## Published serving frontier (summary-only)" in lines
    line = next(x for x in lines if "| mi355x / sglang / fp4 | TP4 | 4 | c=64 |" in x)
    assert "| 1,164.7 | 582.2 | 37.483 |" in line and "InferenceX: published summary, no interval" in line
    line = next(x for x in lines if "| gb200 / dynamo-sglang / fp8 | P 6x TP1 DPA / D 1x TP1 DPA | 72 | c=4096 |" in x)
    assert "| 2,168.2 | 705.6 | 31.247 |" in line
    assert any("37 of 40 published points on 6 systems are on their system's front" in x for x in lines)


def test_reimport_is_a_noop_and_a_folder_finds_the_file(tmp_path):
    db = import_and_ingest(tmp_path, "inferencex", FIXTURE.parent)
    r = cli("import", "inferencex", FIXTURE, "--out", tmp_path / "imported")
    assert r.exit_code == 0
    r = cli("ingest", tmp_path / "imported", "--db", db)
    assert r.exit_code == 0 and "ingested 0 new file(s)" in r.output, r.output
    assert rows(db, "SELECT count(*) AS n FROM results") == [{"n": 40}]


def _bad(tmp_path, name: str, doc) -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def test_bad_input_costs_only_its_file_on_one_line(tmp_path):
    row = ROWS[0]
    no_metrics = {k: v for k, v in row.items() if k != "metrics"}
    cases = {
        "object.json": ({"rows": ROWS[:2]}, "a JSON dict, not a list of InferenceX benchmark rows"),
        "missing.json": ([row, no_metrics], "row 2 of 2 has no metrics"),
        "hardware.json": ([{**row, "hardware": "tpu7"}], "row 1 of 1: unknown hardware 'tpu7'"),
        "precision.json": ([{**row, "precision": "fp3"}], "row 1 of 1: unknown precision 'fp3'"),
        "value.json": (
            [row, {**row, "conc": 5, "metrics": {**row["metrics"], "median_ttft": "fast"}}],
            "row 2 of 2: metrics.median_ttft is 'fast', not a number",
        ),
        "negative.json": (
            [{**row, "metrics": {**row["metrics"], "tput_per_gpu": -1.0}}],
            "metrics.tput_per_gpu is -1: a time or a throughput cannot be negative",
        ),
        "tp.json": ([{**row, "decode_tp": 8}], "a single-node point with prefill_tp 4 and decode_tp 8"),
        "nogpus.json": ([{**ROWS[-1], "num_decode_gpu": None}], "row 1 of 1: num_decode_gpu is None"),
        "truncated.json": (FIXTURE.read_text()[:3000], "not valid JSON"),
    }
    paths = [_bad(tmp_path, name, doc) for name, (doc, _) in cases.items()]
    out = tmp_path / "out"
    r = benchdb_cmd("import", "inferencex", *map(str, paths), str(FIXTURE), "--out", str(out))
    assert r.returncode == 1
    errs = [x for x in r.stderr.splitlines() if x.startswith("benchdb: error:")]
    assert len(errs) == len(cases) and "Traceback" not in r.stderr
    for path, (_, expected) in zip(paths, cases.values(), strict=True):
        (line,) = [e for e in errs if f"{path}:" in e]
        assert expected in line, line
    written = list(out.rglob("*.parquet"))
    assert len(written) == 40  # the good file only: nothing of any bad one
    assert "imported 40 result(s) from 1 inferencex file(s)" in r.stdout and "9 file(s) failed" in r.stdout


def test_a_newer_metric_is_kept_aside_not_guessed(tmp_path):
    row = {**ROWS[0], "metrics": {**ROWS[0]["metrics"], "p75_gpu_clock": 1712.0}}
    db = import_and_ingest(tmp_path, "inferencex", _bad(tmp_path, "benchmarks_new.json", [row]))
    (res,) = rows(db, "SELECT json_extract(settings, '$.unread_metrics') AS unread FROM results")
    assert json.loads(res["unread"]) == ["p75_gpu_clock"]
    assert rows(db, "SELECT count(*) AS n FROM source_statistics WHERE metric LIKE '%clock%'") == [{"n": 0}]


def test_measured_power_per_gpu_is_kept_unless_marked_invalid(tmp_path):
    measured = {**ROWS[0], "metrics": {**ROWS[0]["metrics"], "avg_power_w": 812.5}}
    invalid = {**ROWS[1], "metrics": {**ROWS[1]["metrics"], "avg_power_w": 700.0, "power_valid": 0}}
    db = import_and_ingest(tmp_path, "inferencex", _bad(tmp_path, "benchmarks_power.json", [measured, invalid]))
    got = rows(db, "SELECT concurrency, accelerator_power_w FROM serving_published_points ORDER BY concurrency")
    assert {(g["concurrency"], g["accelerator_power_w"]) for g in got} == {
        (ROWS[0]["conc"], 812.5),
        (ROWS[1]["conc"], None),
    }
    r = benchdb_cmd(
        "import",
        "inferencex",
        str(
            _bad(
                tmp_path,
                "benchmarks_hot.json",
                [{**measured, "avg_power_w": None, "metrics": {**measured["metrics"], "avg_power_w": 98_000}}],
            )
        ),
        "--out",
        str(tmp_path / "hot"),
    )
    assert r.returncode == 1 and "avg_power_w is 98000, not a GPU's power in W (0-5000)" in r.stderr


def test_a_systems_node_size_the_rows_do_not_name_is_unknown_not_one(db):
    """The rows name no node size: the systems view must not call gb200 a system of one GPU while its
    points ran on up to 72."""
    got = rows(db, "SELECT system_name, accelerators_per_node, nodes, accelerators FROM systems ORDER BY 1")
    assert [g["system_name"] for g in got] == sorted({r["hardware"] for r in ROWS})
    assert all((g["accelerators_per_node"], g["nodes"], g["accelerators"]) == (None, None, None) for g in got)
    # the accelerators each point used are the rows' own
    assert rows(
        db,
        "SELECT max(accelerators) AS most FROM results r JOIN hardware h USING (hardware_id) "
        "WHERE h.system_name = 'gb200'",
    ) == [{"most": 72}]


def test_a_model_id_starting_with_a_dot_is_imported_and_ingested(tmp_path):
    """A model key such as `.dsr1` (or a vLLM `./models/llama`) names a visible file: the result
    it imports is the result ingest loads, never one skipped as a hidden file."""
    path = _bad(tmp_path, "dot.json", [{**ROWS[0], "model": ".dsr1"}])
    out, db = tmp_path / "out", tmp_path / "w.duckdb"
    r = benchdb_cmd("import", "inferencex", str(path), "--out", str(out))
    assert r.returncode == 0, r.stderr
    (written,) = list(out.rglob("*.parquet"))
    assert not written.name.startswith(".")
    r = benchdb_cmd("ingest", str(out), "--db", str(db))
    assert r.returncode == 0 and "ingested 1 new file(s)" in r.stdout, r.stdout + r.stderr
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT model_id FROM results").fetchall() == [(".dsr1",)]
    finally:
        con.close()


def test_absurd_figures_are_refused_at_import(tmp_path):
    """A published figure no GPU or request could reach rejects its file, as the recomputed imports'
    bounds do."""
    row = ROWS[0]
    cases = {
        "intvty.json": (
            [{**row, "metrics": {**row["metrics"], "median_intvty": 3.2e12}}],
            "row 1 of 1: metrics.median_intvty is 3.2e+12: more tokens/s than one request can produce",
        ),
        "tput.json": (
            [{**row, "metrics": {**row["metrics"], "output_tput_per_gpu": 1.7e22}}],
            "metrics.output_tput_per_gpu is 1.7e+22: more tokens/s than one GPU can process",
        ),
        "tpot.json": (
            [{**row, "metrics": {**row["metrics"], "median_tpot": 1e-12}}],
            "metrics.median_tpot is 1e-12: a time per token faster than one request can produce",
        ),
        "ttft.json": ([{**row, "metrics": {**row["metrics"], "p99_ttft": 1e9}}], "longer than any request takes"),
    }
    paths = [_bad(tmp_path, name, doc) for name, (doc, _) in cases.items()]
    out = tmp_path / "out"
    r = benchdb_cmd("import", "inferencex", *map(str, paths), "--out", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    errs = [x for x in r.stderr.splitlines() if x.startswith("benchdb: error:")]
    assert len(errs) == len(cases), r.stderr
    for path, (_, expected) in zip(paths, cases.values(), strict=True):
        (line,) = [e for e in errs if f"{path}:" in e]
        assert expected in line, line
    assert not list(out.rglob("*.parquet"))


def test_a_row_is_one_point_on_its_system_with_the_rows_own_figures():
    """The module's parse alone: the first row's figures, GPUs and parallelism, nothing computed."""
    items = inferencex.parse(FIXTURE)
    assert len(items) == len(ROWS)
    first, row = items[0], ROWS[0]
    assert (first.model_id, first.backend, first.precision) == (row["model"], row["framework"], row["precision"])
    assert first.input_shape == f"in={row['isl']},out={row['osl']},concurrency={row['conc']}"
    assert first.options["accelerators"] == _gpus(row) and first.options["parallelism"]["tp"] == row["decode_tp"]
    assert first.hardware["system_name"] == row["hardware"] and first.summary_only and first.rows == []
    stats = {(m, s): v for m, _, s, v in first.statistics}
    assert stats[("ttft_s", "median")] == row["metrics"]["median_ttft"]
    assert stats[("total_throughput_per_gpu", "value")] == row["metrics"]["tput_per_gpu"]
    assert stats[("interactivity", "median")] == row["metrics"]["median_intvty"]
