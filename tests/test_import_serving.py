"""`benchdb import vllm-serve|sglang-serve|aiperf|guidellm`: serving results of other tools, every
figure recomputed by benchdb from their per-request data in one vocabulary, the tools' own
summaries kept beside them. Each test computes the expected medians by hand from the raw file
(not through benchdb's code). Fixtures: real GuideLLM and AIPerf output, vLLM and SGLang files
written from their result writers (tests/fixtures/interop/README.md)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from benchdb.cli import main

pytestmark = pytest.mark.core

FIX = Path(__file__).parent / "fixtures" / "interop" / "serving"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def import_and_ingest(tmp_path, fmt, *paths, extra=()):
    out, db = tmp_path / "imported", tmp_path / "bench.duckdb"
    r = cli("import", fmt, *paths, "--out", out, *extra)
    assert r.exit_code == 0, r.output
    r = cli("ingest", out, "--db", db)
    assert r.exit_code == 0, r.output
    return db


def rows(db, sql, params=None):
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute(sql, params or [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()


def medians(db, input_shape):
    """metric -> (median, n) of the one imported result with ``input_shape``."""
    got = rows(db, "SELECT m.metric, m.median, m.n FROM result_metrics m JOIN results r USING (result_id) "
                   "WHERE r.input_shape = $s", {"s": input_shape})
    return {g["metric"]: (g["median"], g["n"]) for g in got}


def source_stat(db, metric, statistic, input_shape):
    (got,) = rows(db, "SELECT st.value FROM source_statistics st JOIN results r USING (result_id) "
                      "WHERE st.metric = $m AND st.statistic = $s AND r.input_shape = $i",
                  {"m": metric, "s": statistic, "i": input_shape})
    return got["value"]


def definition(db, metric, input_shape):
    (got,) = rows(db, "SELECT CAST(s.definitions AS VARCHAR) AS d FROM result_sources s JOIN results r "
                      "USING (result_id) WHERE r.input_shape = $i", {"i": input_shape})
    return json.loads(got["d"])[metric]


def reimport_adds_nothing(tmp_path, fmt, *paths):
    out, db = tmp_path / "imported", tmp_path / "bench.duckdb"
    before = sorted(p.name for p in out.rglob("*.parquet"))
    r = cli("import", fmt, *paths, "--out", out)
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
    tpot = [(x["request_end"] - x["first_token_iteration"]) / (r["output_tokens"] - 1)
            for x, r in zip(t, ok, strict=True) if r["output_tokens"] > 1]
    return bench, ok, {"ttft_s": ttft, "e2e_s": e2e, "tpot_s": tpot}


def test_guidellm_recomputed_medians_equal_a_hand_computation(tmp_path):
    src = FIX / "guidellm" / "guidellm_c2.json"
    db = import_and_ingest(tmp_path, "guidellm", src)
    bench, ok, hand = _guidellm_by_hand(json.loads(src.read_text()))
    got = medians(db, "in=16,out=32,concurrency=2")
    for metric, values in hand.items():
        assert got[metric][1] == len(values) == len(ok)
        assert got[metric][0] == pytest.approx(statistics.median(values), rel=1e-9), metric
    assert "itl_token_s" not in got            # GuideLLM keeps no per-chunk times: never invented
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
    (pt,) = rows(db, "SELECT * FROM serving_points")
    assert (pt["n_requests"], pt["errors"], pt["concurrency"]) == (len(ok) + 5, 5, 4)
    assert pt["ttft_p50_s"] == pytest.approx(statistics.median(hand["ttft_s"]), rel=1e-9)
    assert (pt["measured_by"], pt["hardware_name"], pt["engine"]) == ("guidellm 0.8.1", "lab-box-7", "openai")
    # The window: first send to last end over every measured request, failed ones included.
    starts = [r["info"]["timings"]["request_start"] for r in ok + errored]
    ends = [r["info"]["timings"]["request_end"] for r in ok] + [r["info"]["timings"]["resolve_end"] for r in errored]
    assert pt["request_throughput"] == pytest.approx(len(ok) / (max(ends) - min(starts)), rel=1e-9)


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
    points = {p["endpoint"]: p for p in rows(db, "SELECT * FROM serving_points")}
    recs, ok, hand = _aiperf_by_hand(FIX / "aiperf" / "c2_fail7")
    comp = points["completions"]
    assert (comp["n_requests"], comp["errors"]) == (len(recs), len(recs) - len(ok)) == (40, 5)
    assert comp["tpot_p50_s"] == pytest.approx(statistics.median(hand["tpot_s"]), rel=1e-9)
    # With --use-server-token-count AIPerf's ITL means what benchdb's TPOT means.
    (fig,) = rows(db, "SELECT * FROM serving_source_figures WHERE endpoint = 'chat' AND metric = 'tpot_s'")
    assert fig["same_definition"] is True
    assert fig["benchdb_p50"] == pytest.approx(fig["source_p50"], rel=0.02)


# -- bad input ------------------------------------------------------------------------------------

def _errors(output):
    return [line for line in output.splitlines() if line.startswith("benchdb: error:")]


@pytest.mark.parametrize("fmt, good", [("guidellm", "guidellm/guidellm_c2.json"),
                                       ("aiperf", "aiperf/c2/profile_export.jsonl")])
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
    other.write_text((FIX / ("aiperf/c2/profile_export.jsonl" if fmt == "guidellm" else "guidellm/guidellm_c2.json"))
                     .read_text())
    out = tmp_path / "out"
    r = cli("import", fmt, trunc, other, good, "--out", out)
    assert r.exit_code == 1
    errs = _errors(r.output)
    assert len(errs) == 2 and str(trunc) in errs[0] and str(other) in errs[1], errs
    assert "truncated" in errs[0]
    files = list(out.rglob("*.parquet"))
    assert len(files) == 1 and good.stem.split("_")[0] in str(files[0])
