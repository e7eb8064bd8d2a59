"""`benchdb import vllm-serve|sglang-serve|aiperf|guidellm`: serving results of other tools, every
figure recomputed by benchdb from their per-request data in one vocabulary, the tools' own
summaries kept beside them. Each test computes the expected medians by hand from the raw file
(not through benchdb's code). Fixtures: real GuideLLM and AIPerf output, vLLM and SGLang files
written from their result writers (tests/fixtures/interop/README.md)."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest
import yaml
from conftest import benchdb_cmd, cli, import_and_ingest, need_module
from conftest import db_rows as rows
from support.serving_imports import FIX, medians

pytestmark = pytest.mark.core


def source_stat(db, metric, statistic, input_shape):
    (got,) = rows(
        db,
        "SELECT st.value FROM source_statistics st JOIN results r USING (result_id) "
        "WHERE st.metric = $m AND st.statistic = $s AND r.input_shape = $i",
        {"m": metric, "s": statistic, "i": input_shape},
    )
    return got["value"]


def definition(db, metric, input_shape):
    (got,) = rows(
        db,
        "SELECT d.* FROM source_definitions d JOIN results r USING (result_id) "
        "WHERE r.input_shape = $i AND d.metric = $m",
        {"i": input_shape, "m": metric},
    )
    return got


def failed_point(db, input_shape, failed, requests, mode="%"):
    """A load point over the failed-request limit: invalid with that reason, so not in serving_points
    (the latest valid points), its figures still in the results: metric -> (median, n)."""
    (res,) = rows(
        db,
        "SELECT validity, validity_reasons FROM results WHERE input_shape = $s AND mode LIKE $m",
        {"s": input_shape, "m": mode},
    )
    assert res["validity"] == "invalid", res
    assert res["validity_reasons"] == [
        f"failed_requests: {failed} of {requests} requests failed ({failed / requests:.0%}, limit 10%); "
        "the figures describe only the requests that completed"
    ]
    shown = rows(
        db,
        "SELECT count(*) AS n FROM serving_points WHERE input_shape = $s AND endpoint LIKE $m",
        {"s": input_shape, "m": mode},
    )
    assert shown == [{"n": 0}]
    got = medians(db, input_shape, mode)
    assert got["request_error"][1] == failed
    return got


def reimport_adds_nothing(tmp_path, fmt, *paths, extra=()):
    out, db = tmp_path / "imported", tmp_path / "bench.duckdb"
    before = sorted(p.name for p in out.rglob("*.parquet"))
    r = cli("import", fmt, *paths, "--out", out, *extra)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.rglob("*.parquet")) == before
    r = cli("ingest", out, "--db", db)
    assert r.exit_code == 0 and "ingested 0 new file(s)" in r.output, r.output


# -- GuideLLM ------------------------------------------------------------------------------------


def _guidellm_by_hand(doc):
    bench = doc["benchmarks"][0]
    ok = bench["requests"]["successful"]
    t = [r["info"]["timings"] for r in ok]
    ttft = [x["first_token_iteration"] - x["request_start"] for x in t]
    e2e = [x["request_end"] - x["request_start"] for x in t]
    tpot = [
        (x["request_end"] - x["first_token_iteration"]) / (r["output_tokens"] - 1)
        for x, r in zip(t, ok, strict=True)
        if r["output_tokens"] > 1
    ]
    return bench, ok, {"ttft_s": ttft, "e2e_s": e2e, "tpot_s": tpot}


def test_guidellm_recomputed_medians_equal_a_hand_computation(tmp_path):
    src = FIX / "guidellm" / "guidellm_c2.json"
    db = import_and_ingest(tmp_path, "guidellm", src)
    bench, ok, hand = _guidellm_by_hand(json.loads(src.read_text()))
    got = medians(db, "in=16,out=32,concurrency=2")
    for metric, values in hand.items():
        assert got[metric][1] == len(values) == len(ok)
        assert got[metric][0] == pytest.approx(statistics.median(values), rel=1e-9), metric
    assert "itl_token_s" not in got  # GuideLLM keeps no per-chunk times: never invented
    # The source's own summary, as GuideLLM computed it: its TPOT includes the first token.
    theirs = source_stat(db, "time_per_output_token_ms", "median", "in=16,out=32,concurrency=2")
    assert theirs == bench["metrics"]["time_per_output_token_ms"]["successful"]["median"]
    assert theirs / 1e3 > got["tpot_s"][0]
    d = definition(db, "tpot_s", "in=16,out=32,concurrency=2")
    assert d["same_definition"] is False and "includes the first token" in d["source_definition"]
    assert not definition(db, "itl_token_s", "in=16,out=32,concurrency=2")["recomputed"]
    (prov,) = rows(db, "SELECT format, tool, tool_version, summary_only FROM result_sources")
    assert prov == {"format": "guidellm", "tool": "guidellm", "tool_version": "0.8.1", "summary_only": False}
    # Named by no file and no flag: unknown hardware, never this machine's.
    assert rows(db, "SELECT kind, device_name FROM hardware") == [{"kind": "unknown", "device_name": "unknown"}]
    reimport_adds_nothing(tmp_path, "guidellm", src)


def test_guidellm_yaml_with_failed_requests(tmp_path):
    src = FIX / "guidellm" / "guidellm_c4_fail7.yaml"
    db = import_and_ingest(tmp_path, "guidellm", src, extra=("--hardware", "Lab-Box-7"))
    bench, ok, hand = _guidellm_by_hand(yaml.safe_load(src.read_text()))
    errored = bench["requests"]["errored"]
    assert len(errored) == 5
    # 5 of 40 failed: past the 10 % limit, the point is invalid and says why
    pt = failed_point(db, "in=16,out=32,concurrency=4", 5, len(ok) + 5)
    assert pt["ttft_s"][0] == pytest.approx(statistics.median(hand["ttft_s"]), rel=1e-9)
    (res,) = rows(
        db,
        "SELECT coalesce(h.system_name, h.device_name) AS hw, r.backend "
        "FROM results r JOIN hardware h USING (hardware_id)",
    )
    assert (res["hw"], res["backend"]) == ("lab-box-7", "openai")
    # The window: first send to last end over every measured request (a failed one ends at its send).
    starts = [r["info"]["timings"]["request_start"] for r in ok + errored]
    ends = [r["info"]["timings"]["request_end"] for r in ok] + [r["info"]["timings"]["request_start"] for r in errored]
    assert pt["request_throughput"][0] == pytest.approx(len(ok) / (max(ends) - min(starts)), rel=1e-9)


# -- AIPerf ---------------------------------------------------------------------------------------


def _aiperf_by_hand(folder):
    recs = [json.loads(line) for line in (folder / "profile_export.jsonl").read_text().splitlines() if line.strip()]
    ok = [r for r in recs if "error" not in r]
    m = [r["metrics"] for r in ok]
    ttft = [x["time_to_first_token"]["value"] / 1e3 for x in m]
    e2e = [x["request_latency"]["value"] / 1e3 for x in m]
    out = [x["usage_completion_tokens"]["value"] for x in m]
    tpot = [(e - t) / (n - 1) for e, t, n in zip(e2e, ttft, out, strict=True) if n > 1]
    gaps = [g / 1e3 for x in m for g in x["inter_chunk_latency"]["value"]]
    return recs, ok, {"ttft_s": ttft, "e2e_s": e2e, "tpot_s": tpot, "itl_chunk_s": gaps}


def test_aiperf_recomputed_medians_equal_a_hand_computation(tmp_path):
    folder = FIX / "aiperf" / "c2"
    db = import_and_ingest(tmp_path, "aiperf", folder)
    recs, ok, hand = _aiperf_by_hand(folder)
    got = medians(db, "in=16,out=32,concurrency=2")
    for metric, values in hand.items():
        assert got[metric][1] == len(values)
        assert got[metric][0] == pytest.approx(statistics.median(values), rel=1e-9), metric
    # AIPerf's own ITL divides by the client's re-tokenized count (85 tokens, not the server's 32).
    summary = json.loads((folder / "profile_export_aiperf.json").read_text())
    theirs = source_stat(db, "inter_token_latency", "p50", "in=16,out=32,concurrency=2")
    assert theirs == summary["inter_token_latency"]["p50"]
    assert theirs / 1e3 < got["tpot_s"][0] / 2
    assert definition(db, "tpot_s", "in=16,out=32,concurrency=2")["same_definition"] is False
    assert definition(db, "itl_chunk_s", "in=16,out=32,concurrency=2")["same_definition"] is True
    reimport_adds_nothing(tmp_path, "aiperf", folder)


def test_aiperf_failed_requests_and_server_token_counts(tmp_path):
    db = import_and_ingest(tmp_path, "aiperf", FIX / "aiperf" / "c2_fail7", FIX / "aiperf" / "c2_chat_servertok")
    recs, ok, hand = _aiperf_by_hand(FIX / "aiperf" / "c2_fail7")
    assert (len(recs), len(recs) - len(ok)) == (40, 5)
    (shape,) = rows(db, "SELECT input_shape FROM results WHERE mode = 'completions'")
    comp = failed_point(db, shape["input_shape"], 5, 40, "completions")  # 12 % failed: past the 10 % limit
    assert comp["tpot_s"][0] == pytest.approx(statistics.median(hand["tpot_s"]), rel=1e-9)
    # With --use-server-token-count AIPerf's ITL means what benchdb's TPOT means.
    (fig,) = rows(db, "SELECT * FROM serving_source_figures WHERE endpoint = 'chat' AND metric = 'tpot_s'")
    assert fig["same_definition"] is True
    assert fig["benchdb_p50"] == pytest.approx(fig["source_p50"], rel=0.02)


# -- bad input ------------------------------------------------------------------------------------


def _errors(output):
    return [line for line in output.splitlines() if line.startswith("benchdb: error:")]


@pytest.mark.parametrize(
    "fmt, good", [("guidellm", "guidellm/guidellm_c2.json"), ("aiperf", "aiperf/c2/profile_export.jsonl")]
)
def test_truncated_files_and_files_of_another_tool_are_refused_by_name(tmp_path, fmt, good):
    good = FIX / good
    trunc = tmp_path / "trunc" / good.name
    trunc.parent.mkdir()
    text = good.read_text()
    trunc.write_text(text[: len(text) * 2 // 3])
    if fmt == "aiperf":
        summary = "profile_export_aiperf.json"
        (trunc.parent / summary).write_text((good.parent / summary).read_text())
    other = tmp_path / "other" / ("profile_export.jsonl" if fmt == "guidellm" else "benchmarks.json")
    other.parent.mkdir()
    other.write_text(
        (FIX / ("aiperf/c2/profile_export.jsonl" if fmt == "guidellm" else "guidellm/guidellm_c2.json")).read_text()
    )
    out = tmp_path / "out"
    r = cli("import", fmt, trunc, other, good, "--out", out)
    assert r.exit_code == 1
    errs = _errors(r.output)
    assert len(errs) == 2 and str(trunc) in errs[0] and str(other) in errs[1], errs
    assert "truncated" in errs[0]
    files = list(out.rglob("*.parquet"))
    assert len(files) == 1 and good.stem.split("_")[0] in str(files[0])


# -- vLLM -----------------------------------------------------------------------------------------


def _lists_by_hand(doc):
    """(ok indices, {metric: values}) from vLLM/SGLang per-request lists, seconds."""
    ok = [i for i, e in enumerate(doc["errors"]) if not e]
    ends = doc.get("latencies") or [doc["ttfts"][i] + sum(doc["itls"][i]) for i in range(len(doc["ttfts"]))]
    return ok, {
        "ttft_s": [doc["ttfts"][i] for i in ok],
        "e2e_s": [ends[i] for i in ok],
        "tpot_s": [(ends[i] - doc["ttfts"][i]) / (doc["output_lens"][i] - 1) for i in ok if doc["output_lens"][i] > 1],
        "itl_chunk_s": [g for i in ok for g in doc["itls"][i]],
    }


def test_vllm_recomputed_medians_metadata_and_summary(tmp_path):
    v = FIX / "vllm"
    db = import_and_ingest(
        tmp_path,
        "vllm-serve",
        v / "c2_detailed.json",
        v / "c4_fail7_detailed.json",
        v / "rate20_summary.json",
        extra=("--hardware", "h100-sxm"),
    )
    points = {p["concurrency"]: p for p in rows(db, "SELECT * FROM serving_points")}
    assert sorted(points) == [2]  # c4_fail7: 5 of 35 failed, past the 10 % limit
    (c4,) = rows(db, "SELECT input_shape FROM results WHERE input_shape LIKE '%concurrency=4'")
    for shape, name in ((points[2]["input_shape"], "c2_detailed.json"), (c4["input_shape"], "c4_fail7_detailed.json")):
        doc = json.loads((v / name).read_text())
        ok, hand = _lists_by_hand(doc)
        got = failed_point(db, shape, doc["failed"], doc["num_prompts"]) if doc["failed"] else medians(db, shape)
        for metric, values in hand.items():
            assert got[metric][1] == len(values), metric
            assert got[metric][0] == pytest.approx(statistics.median(values), rel=1e-9), metric
        # vLLM's own summary, kept as it wrote it (ms).
        assert source_stat(db, "ttft_ms", "median", shape) == doc["median_ttft_ms"]
    assert (points[2]["errors"], points[2]["n_requests"]) == (0, 32)
    c2 = points[2]
    assert (c2["engine"], c2["precision"], c2["hardware_name"], c2["devices"]) == ("vllm", "bf16", "h100-sxm", 1)
    assert json.loads(c2["options"])["tensor_parallel_size"] == 1  # --metadata pairs become engine options
    # Without --save-detailed: summary-only, never mixed with sample statistics.
    (summ,) = rows(
        db,
        "SELECT r.n, r.median, s.summary_only, r.input_shape FROM results r "
        "JOIN result_sources s USING (result_id) WHERE s.summary_only",
    )
    assert summ["n"] == 0 and summ["median"] is None and summ["input_shape"].endswith("rate=poisson:20")
    rate_doc = json.loads((v / "rate20_summary.json").read_text())
    assert source_stat(db, "ttft_ms", "p99.9", summ["input_shape"]) == rate_doc["p99.9_ttft_ms"]
    reimport_adds_nothing(
        tmp_path,
        "vllm-serve",
        v / "c2_detailed.json",
        v / "c4_fail7_detailed.json",
        v / "rate20_summary.json",
        extra=("--hardware", "h100-sxm"),
    )


# -- SGLang ---------------------------------------------------------------------------------------


def test_sglang_lines_recomputed_and_a_summary_only_line(tmp_path):
    s = FIX / "sglang"
    db = import_and_ingest(tmp_path, "sglang-serve", s)
    lines = [json.loads(line) for f in ("c2_details.jsonl", "runs.jsonl") for line in (s / f).read_text().splitlines()]
    detailed = [d for d in lines if "ttfts" in d]
    assert len(lines) == 3 and len(detailed) == 2
    for doc in detailed:
        ok, hand = _lists_by_hand(doc)
        failed = len(doc["errors"]) - len(ok)
        (pt,) = rows(
            db,
            "SELECT input_shape, backend, precision FROM results WHERE input_shape LIKE $c",
            {"c": f"%concurrency={doc['max_concurrency']}"},
        )
        # a line with 1 request in 7 failed is past the 10 % limit: invalid, with the reason
        got = (
            failed_point(db, pt["input_shape"], failed, len(doc["errors"]))
            if failed
            else medians(db, pt["input_shape"])
        )
        for metric, values in hand.items():
            assert got[metric][0] == pytest.approx(statistics.median(values), rel=1e-9), metric
        assert (pt["backend"], pt["precision"]) == ("sglang", "bf16")
        # The window is SGLang's duration (it keeps no send times).
        assert got["request_throughput"][0] == pytest.approx(len(ok) / doc["duration"], rel=1e-9)
    (summ,) = rows(
        db,
        "SELECT r.n, s.summary_only, s.tool_version FROM results r JOIN result_sources s "
        "USING (result_id) WHERE s.summary_only",
    )
    assert summ == {"n": 0, "summary_only": True, "tool_version": "0.5.23"}
    figs = rows(db, "SELECT * FROM serving_source_figures WHERE metric = 'e2e_s' AND NOT summary_only")
    # [DONE] vs the last chunk (the view lists valid points: the line with failures is not one)
    assert len(figs) == 1 and all(f["same_definition"] is False for f in figs)
    reimport_adds_nothing(tmp_path, "sglang-serve", s)


def test_an_import_with_send_times_is_read_over_its_steady_state_as_benchdb_runs_are(tmp_path):
    """Requests that carry their send times (vLLM's start_times) are ordered as benchdb's own, so the
    same steady-state test runs over them; SGLang's lines carry none, so none is sought."""
    db = import_and_ingest(tmp_path, "vllm-serve", FIX / "vllm" / "c2_detailed.json", extra=("--hardware", "h100"))
    out = tmp_path / "sglang"
    assert cli("import", "sglang-serve", FIX / "sglang" / "c2_details.jsonl", "--out", out).exit_code == 0
    assert cli("ingest", out, "--db", db).exit_code == 0
    got = {
        p["engine"]: p
        for p in rows(db, "SELECT engine, figures_window, steady_state, steady_requests, ttft_p50_s, whole_ttft_p50_s "
                          "FROM serving_points")
    }  # fmt: skip
    vllm, sglang = got["vllm"], got["sglang"]
    assert (vllm["figures_window"], vllm["steady_state"]) == ("steady state", "found") and vllm["steady_requests"] >= 24
    (window,) = rows(db, "SELECT extra->'steady_state'->>'method' AS method FROM results WHERE backend = 'vllm'")
    assert window["method"].startswith("issue-order buckets")
    assert (sglang["figures_window"], sglang["steady_state"]) == ("whole window", None)
    assert sglang["ttft_p50_s"] == sglang["whole_ttft_p50_s"]


def test_sglang_line_without_server_info_needs_a_model(tmp_path):
    doc = json.loads((FIX / "sglang" / "c2_details.jsonl").read_text().splitlines()[0])
    doc["server_info"] = None
    src = tmp_path / "bare.jsonl"
    src.write_text(json.dumps(doc) + "\n")
    r = cli("import", "sglang-serve", src, "--out", tmp_path / "out")
    assert r.exit_code == 1 and "give --model NAME" in r.output
    r = cli("import", "sglang-serve", src, "--out", tmp_path / "out", "--model", "meta-llama/Llama-3.1-8B")
    assert r.exit_code == 0, r.output


def test_an_input_count_of_0_rejects_the_file_and_a_multi_turn_replay_drops_its_input_counts(tmp_path):
    doc = json.loads((FIX / "sglang" / "c2_details.jsonl").read_text().splitlines()[0])
    zero = dict(doc, input_lens=[0] * len(doc["input_lens"]))
    bad = tmp_path / "zero.jsonl"
    bad.write_text(json.dumps(zero) + "\n")
    r = cli("import", "sglang-serve", bad, "--out", tmp_path / "out")
    assert r.exit_code == 1 and "input_lens[0] is 0 for a completed request" in r.output, r.output
    assert not list((tmp_path / "out").rglob("*.parquet"))
    # an agentic-trace line: its input_lens are one conversation's length copied to every round
    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / "agentic.jsonl").write_text(json.dumps(dict(doc, dataset_name="agentic-trace")) + "\n")
    db = import_and_ingest(tmp_path, "sglang-serve", replay)
    (pt,) = rows(db, "SELECT input_shape, CAST(settings AS VARCHAR) AS settings FROM results")
    assert "input_lens_dropped" in pt["settings"] and "sglang#39889" in pt["settings"]
    assert "input_tokens" not in medians(db, pt["input_shape"]) and "ttft_s" in medians(db, pt["input_shape"])


# -- bad per-request lists ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fmt, name", [("vllm-serve", "vllm/c2_detailed.json"), ("sglang-serve", "sglang/c2_details.jsonl")]
)
def test_per_request_lists_of_different_lengths_reject_the_file_only(tmp_path, fmt, name):
    good = FIX / name
    doc = json.loads(good.read_text().splitlines()[0] if fmt == "sglang-serve" else good.read_text())
    doc["ttfts"] = doc["ttfts"][:-1]
    bad = tmp_path / ("bad.jsonl" if fmt == "sglang-serve" else "bad.json")
    bad.write_text(json.dumps(doc) + "\n")
    wrong = tmp_path / ("wrong.jsonl" if fmt == "sglang-serve" else "wrong.json")
    wrong.write_text((FIX / "aiperf" / "c2" / "profile_export_aiperf.json").read_text().replace("\n", " ") + "\n")
    trunc = tmp_path / ("trunc.jsonl" if fmt == "sglang-serve" else "trunc.json")
    trunc.write_text(good.read_text()[:4000])
    out = tmp_path / "out"
    r = cli("import", fmt, bad, wrong, trunc, good, "--out", out)
    assert r.exit_code == 1
    errs = _errors(r.output)
    assert len(errs) == 3, errs
    assert str(bad) in errs[0] and "disagree in length" in errs[0] and "ttfts" in errs[0]
    assert str(wrong) in errs[1] and "not a" in errs[1]
    assert str(trunc) in errs[2] and "truncated" in errs[2]
    assert len(list(out.rglob("*.parquet"))) == 1


# -- export and the same server measured by two tools ---------------------------------------------


def test_guidellm_and_benchdb_side_by_side_and_the_vllm_export_round_trip(tmp_path):
    """benchdb measures the stub server GuideLLM measured for the fixture (same timings, same load,
    same hardware via --hardware-file): report --serving shows both, every figure in benchdb's
    definitions, GuideLLM's own TPOT beside it; exporting the benchdb point as vLLM's format and
    importing it again gives the same medians."""
    import sys

    need_module("httpx", "benchdb[serving]")  # not among the core floors

    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    stub = f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}} --ttft-ms 50 --itl-ms 10"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "stub",
        "--server",
        stub,
        "--concurrency",
        "2",
        "--seq-lens",
        "16",
        "--gen-tokens",
        "32",
        "--warmup",
        "2",
        "--min-iters",
        "10",
        "--max-time",
        "5",
        "--max-background-cpu",
        "100%",
        "--out",
        str(out),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    hw = tmp_path / "hw.json"
    hw.write_text(benchdb_cmd("hardware", "--format", "json", check=True).stdout)
    r = cli("import", "guidellm", FIX / "guidellm" / "guidellm_c2.json", "--hardware-file", hw, "--out", out)
    assert r.exit_code == 0, r.output
    assert cli("ingest", out, "--db", db).exit_code == 0
    pts = {p["measured_by"]: p for p in rows(db, "SELECT * FROM serving_points")}
    assert set(pts) == {"benchdb", "guidellm 0.8.1"}
    assert pts["benchdb"]["hardware_id"] == pts["guidellm 0.8.1"]["hardware_id"]  # one machine
    assert pts["benchdb"]["input_shape"] == pts["guidellm 0.8.1"]["input_shape"] == "in=16,out=32,concurrency=2"
    rep = cli("report", "--serving", "--db", db, "--format", "json")
    assert rep.exit_code == 0, rep.output
    sections = json.loads(rep.output)
    assert {r["measured_by"] for r in sections["serving_points"]} == {"benchdb", "guidellm 0.8.1"}
    (tpot,) = [r for r in sections["serving_sources"] if r["metric"] == "tpot_s"]
    assert tpot["same_definition"] is False and tpot["source_p50"] > tpot["benchdb_p50"]

    ex = tmp_path / "vllm"
    r = cli("export", "--format", "vllm-serve", "--db", db, "--out", ex)
    assert r.exit_code == 0 and "1 vllm-serve result file(s)" in r.output, r.output  # GuideLLM's: no chunks
    (doc_path,) = ex.glob("*.json")
    doc = json.loads(doc_path.read_text())
    ok, hand = _lists_by_hand(doc)
    assert doc["median_ttft_ms"] == pytest.approx(statistics.median(hand["ttft_s"]) * 1e3, rel=1e-9)
    back, db2 = tmp_path / "back", tmp_path / "w2.duckdb"
    assert cli("import", "vllm-serve", ex, "--out", back).exit_code == 0
    assert cli("ingest", back, "--db", db2).exit_code == 0
    (orig,) = rows(db, "SELECT result_id FROM serving_points WHERE measured_by = 'benchdb'")
    before = {
        m["metric"]: m for m in rows(db, "SELECT * FROM result_metrics WHERE result_id = $r", {"r": orig["result_id"]})
    }
    after = {m["metric"]: m for m in rows(db2, "SELECT * FROM result_metrics")}
    for metric in ("ttft_s", "tpot_s", "itl_chunk_s", "e2e_s", "output_tokens"):
        assert after[metric]["n"] == before[metric]["n"], metric
        assert after[metric]["median"] == pytest.approx(before[metric]["median"], rel=1e-9), metric
    (same,) = rows(db2, "SELECT * FROM serving_points")
    for key in ("input_shape", "engine", "precision", "endpoint", "concurrency"):
        assert same[key] == pts["benchdb"][key], key


def test_vllm_file_variants_window_ramp_up_and_side_files(tmp_path):
    doc = json.loads((FIX / "vllm" / "c2_detailed.json").read_text())
    folder = tmp_path / "results"
    folder.mkdir()
    no_starts = dict(doc, start_times=None)  # an older writer: no send times
    (folder / "openai-infqps-concurrency2-stub-20261125-100000.json").write_text(json.dumps(no_starts))
    (folder / "openai-infqps-concurrency2-stub-20261125-100000.pytorch.json").write_text("[]")  # vLLM's side file
    db = import_and_ingest(tmp_path, "vllm-serve", folder)
    (pt,) = rows(db, "SELECT * FROM serving_points")
    assert pt["request_throughput"] == pytest.approx(doc["completed"] / doc["duration"], rel=1e-9)
    ramp = tmp_path / "ramp.json"
    ramp.write_text(json.dumps(dict(doc, ramp_up_strategy="linear", ramp_up_start_rps=1, ramp_up_end_rps=10)))
    r = cli("import", "vllm-serve", ramp, "--out", tmp_path / "out2")
    assert r.exit_code == 1 and "ramps its request rate" in r.output


def test_sglang_folder_skips_other_json_lines_and_summary_only_is_not_recomputed(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "runs.jsonl").write_text((FIX / "sglang" / "runs.jsonl").read_text())
    (folder / "prompts.jsonl").write_text('{"prompt": "hello"}\n')
    db = import_and_ingest(tmp_path, "sglang-serve", folder)
    shapes = {r["input_shape"] for r in rows(db, "SELECT input_shape FROM results")}
    assert shapes == {"in=16,out=32,concurrency=4", "in=16,out=32,rate=poisson:20"}  # the lengths asked for
    defs = rows(
        db,
        "SELECT d.recomputed, d.why FROM source_definitions d JOIN result_sources s USING (result_id) "
        "WHERE s.summary_only",
    )
    assert defs and all(not d["recomputed"] and "summary-only" in d["why"] for d in defs)


def test_declared_hardware_file_must_be_readable(tmp_path):
    r = cli(
        "import",
        "guidellm",
        FIX / "guidellm" / "guidellm_c2.json",
        "--hardware-file",
        tmp_path / "nope.json",
        "--out",
        tmp_path / "out",
    )
    assert r.exit_code != 0 and "--hardware-file" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "out").exists()


def test_declared_hardware_and_engine_never_contradict_the_file(tmp_path):
    out = tmp_path / "out"
    src = FIX / "guidellm" / "guidellm_c2.json"
    r = cli("import", "guidellm", src, "--hardware", "a", "--hardware-file", src, "--out", out)
    assert r.exit_code != 0 and "not both" in r.output and "Traceback" not in r.output
    optimum = FIX.parent / "optimum_benchmark" / "bert_cpu" / "benchmark.json"  # names its CPU
    r = cli("import", "optimum-benchmark", optimum, "--hardware", "h100-sxm", "--out", out)
    assert r.exit_code == 1 and "the file names its hardware" in r.output
    doc = json.loads((FIX / "vllm" / "c2_detailed.json").read_text())
    sgl = tmp_path / "sglang-client.json"
    sgl.write_text(json.dumps(dict(doc, backend="sglang", endpoint_type="sglang")))  # the file names sglang
    r = cli("import", "vllm-serve", sgl, "--engine", "vllm", "--out", out)
    assert r.exit_code == 1 and "--engine vllm contradicts it" in r.output
    assert not list(out.rglob("*.parquet"))


AIPERF_MULTIRUN = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "aiperf_multirun"


def test_aiperf_schema_1_5_run_and_its_aggregate_of_three_runs(tmp_path):
    """A run's summary (schema 1.5: run_info) and AIPerf's aggregate of its three runs: the mean over
    runs of each figure with AIPerf's own interval (mean -+ t x se), kept as published."""
    db = import_and_ingest(tmp_path, "aiperf", AIPERF_MULTIRUN, extra=("--engine", "vllm", "--hardware", "h100-sxm"))
    agg = json.loads((AIPERF_MULTIRUN / "aggregate" / "profile_export_aiperf_aggregate.json").read_text())
    ttft = agg["metrics"]["time_to_first_token_p90"]
    assert ttft["ci_low"] == pytest.approx(ttft["mean"] - ttft["t_critical"] * ttft["se"])  # AIPerf's method
    got = {
        (r["agg"], r["statistic"]): r["value"]
        for r in rows(
            db,
            "SELECT json_extract_string(r.options, '$.aggregate_of_runs') AS agg, s.statistic, s.value "
            "FROM results r JOIN source_statistics s USING (result_id) WHERE s.metric = 'time_to_first_token'",
        )
    }
    assert got[("3", "p90")] == pytest.approx(ttft["mean"])
    assert (got[("3", "p90_ci_low")], got[("3", "p90_ci_high")]) == (
        pytest.approx(ttft["ci_low"]),
        pytest.approx(ttft["ci_high"]),
    )
    run = json.loads((AIPERF_MULTIRUN / "profile_runs" / "run_0001" / "profile_export_aiperf.json").read_text())
    assert got[(None, "p90")] == pytest.approx(run["time_to_first_token"]["p90"])  # the run itself, its own series
    settings = {
        r["agg"]: json.loads(r["settings"])
        for r in rows(db, "SELECT json_extract_string(options, '$.aggregate_of_runs') AS agg, settings FROM results")
    }
    assert settings[None]["schema_version"] == "1.5" and settings[None]["aiperf_run_label"] == "run_0001"
    assert settings["3"]["aggregate"]["confidence_level"] == 0.95 and settings["3"]["aggregate"]["successful_runs"] == 3


def test_an_aiperf_run_its_own_checks_call_invalid_is_invalid(tmp_path):
    tree = tmp_path / "runs"
    shutil.copytree(AIPERF_MULTIRUN / "profile_runs", tree)
    path = tree / "run_0001" / "profile_export_aiperf.json"
    doc = json.loads(path.read_text())
    doc["runtime_submission_invalid_reasons"] = ["context_overflow_rate_exceeded"]
    path.write_text(json.dumps(doc))
    db = import_and_ingest(tmp_path, "aiperf", tree, extra=("--engine", "vllm", "--hardware", "h100-sxm"))
    (r,) = rows(db, "SELECT validity, validity_reasons FROM results")
    assert r == {"validity": "invalid", "validity_reasons": ["aiperf: context_overflow_rate_exceeded"]}
