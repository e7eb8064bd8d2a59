"""Hostile or broken input to `benchdb import`, each in a real subprocess: a YAML alias bomb, a file
too large to read, JSON nested 100,000 deep, negative timings and lengths, a negative request rate,
a date that is no date. Each is that file's rejection on one line (the file named, nothing of it
written, exit 1), and a good file in the same call is still imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import benchdb_cmd

from benchdb.interop import MAX_SOURCE_BYTES
from benchdb.schema import contract

pytestmark = pytest.mark.core

SERVING = Path(__file__).parents[1] / "fixtures" / "interop" / "serving"
VLLM = SERVING / "vllm" / "c2_detailed.json"
GUIDELLM = SERVING / "guidellm" / "guidellm_c4_fail7.yaml"


def run_import(fmt: str, *paths: Path, out: Path):
    return benchdb_cmd("import", fmt, *map(str, paths), "--out", str(out))


def rejected(r, bad: Path) -> str:
    """The one error line of a call whose only bad file is ``bad``."""
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"benchdb: error: {bad}: "), r.stderr
    assert len(lines[0]) < 400, lines[0]
    return lines[0]


def sources(out: Path) -> set[str]:
    """The source files the contract files under ``out`` came from."""
    return {contract.read_footer(f).scenario["source"]["file"] for f in out.rglob("*.parquet")}


def vllm_variant(tmp_path: Path, name: str, change) -> Path:
    doc = json.loads(VLLM.read_text())
    change(doc)
    path = tmp_path / f"{name}_vllm.json"
    path.write_text(json.dumps(doc))
    return path


def test_yaml_anchors_and_aliases_are_refused(tmp_path):
    doc = yaml.safe_load(GUIDELLM.read_text())
    bench = doc["benchmarks"][0]
    one = bench["requests"]["successful"][0]
    # PyYAML writes one object met twice as an anchor and aliases: 50 aliases of one request, and
    # nested lists of aliases that multiply tenfold per level
    bench["requests"]["successful"] = [one] * 50
    level: list = ["x" * 100]
    for _ in range(6):
        level = [level] * 10
    bench["config"]["backend"]["extras"] = {"bomb": level}
    bomb = tmp_path / "bomb_guidellm.yaml"
    bomb.write_text(yaml.dump(doc))
    assert bomb.stat().st_size < GUIDELLM.stat().st_size * 2 and "*id" in bomb.read_text()
    out = tmp_path / "out"
    r = run_import("guidellm", bomb, GUIDELLM, out=out)
    line = rejected(r, bomb)
    assert "anchor" in line and "alias" in line
    assert sources(out) == {str(GUIDELLM)}  # the good file in the same call still imported


def test_a_file_over_the_size_cap_is_refused_unread(tmp_path):
    big = tmp_path / "big_guidellm.yaml"
    with big.open("wb") as f:  # sparse: the cap is checked before reading
        f.truncate(MAX_SOURCE_BYTES + 1)
    out = tmp_path / "out"
    r = run_import("guidellm", big, GUIDELLM, out=out)
    line = rejected(r, big)
    assert "MiB" in line and "larger than" in line
    assert sources(out) == {str(GUIDELLM)}


def test_json_nested_100k_deep_costs_only_its_own_file(tmp_path):
    deep = tmp_path / "deep_vllm.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    deep_obj = tmp_path / "deepobj_vllm.json"
    deep_obj.write_text('{"model_id": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}")
    out = tmp_path / "out"
    for bad in (deep, deep_obj):
        r = run_import("vllm-serve", bad, VLLM, out=out)
        line = rejected(r, bad)
        assert "nested" in line
        assert sources(out) == {str(VLLM)}


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("ttfts[3]", lambda d: d["ttfts"].__setitem__(3, -0.05)),
        ("itls[2][5]", lambda d: d["itls"][2].__setitem__(5, -0.01)),
        ("latencies[0]", lambda d: d["latencies"].__setitem__(0, -1.0)),
        ("output_lens[1]", lambda d: d["output_lens"].__setitem__(1, -32)),
        ("input_lens[4]", lambda d: d["input_lens"].__setitem__(4, -17)),
    ],
)
def test_negative_timings_and_lengths_are_refused_at_import(tmp_path, field, change):
    bad = vllm_variant(tmp_path, "negative", change)
    out = tmp_path / "out"
    r = run_import("vllm-serve", bad, VLLM, out=out)
    line = rejected(r, bad)
    assert field in line and "negative" in line
    assert sources(out) == {str(VLLM)}


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"request_rate": -3}, ("request rate -3", "positive")),
        ({"request_rate": 0}, ("request rate 0", "positive")),
        ({"request_rate": 4, "burstiness": -1}, ("burstiness -1", "positive")),
        ({"max_concurrency": -2}, ("concurrency -2", "positive")),
    ],
)
def test_a_rate_or_concurrency_that_is_not_positive_is_refused(tmp_path, changes, words):
    bad = vllm_variant(tmp_path, "rate", lambda d: d.update(changes))
    out = tmp_path / "out"
    r = run_import("vllm-serve", bad, VLLM, out=out)
    line = rejected(r, bad)
    assert all(w in line for w in words), line
    assert "poisson:-3" not in json.dumps([contract.read_footer(f).scenario for f in out.rglob("*.parquet")])
    assert sources(out) == {str(VLLM)}


@pytest.mark.parametrize("date", ["yesterday", "2026-13-45T25:99:00", "20261399-999999", 1e300])
def test_a_date_that_cannot_be_read_rejects_the_file(tmp_path, date):
    bad = vllm_variant(tmp_path, "date", lambda d: d.update(date=date))
    out = tmp_path / "out"
    r = run_import("vllm-serve", bad, VLLM, out=out)
    line = rejected(r, bad)
    assert "date" in line
    assert sources(out) == {str(VLLM)}


def _set_request(d: dict, i: int, **lists) -> None:
    for name, value in lists.items():
        d[name][i] = value


#: Files whose figures no request could have: file stem -> (change, words of its line).
ABSURD = {
    "count": (lambda d: _set_request(d, 0, output_lens=1e23), "output_lens[0] 1e+23 is not a token count"),
    "all": (lambda d: d.update(output_lens=[10**12] * len(d["output_lens"])), "output_lens[0] 1000000000000 is not"),
    "prompt": (lambda d: _set_request(d, 3, input_lens=2**24 + 1), "input_lens[3] 16777217 is not a token count"),
    # within the count bound, but ten million tokens in 0.38 s
    "rate": (lambda d: _set_request(d, 0, output_lens=10**7), "request 0: output tokens 10000000 in 0.383958 s"),
    "latency": (lambda d: _set_request(d, 2, latencies=1e7), "request 2: E2E 1e+07 s is longer than any request"),
}


def test_absurd_counts_rates_and_latencies_reject_their_file(tmp_path):
    """Every figure a file gives is held to the bounds the live client's are (a token count, a
    request's output rate, its E2E): each its file's one line naming the field, the good file still imported."""
    bad = {name: vllm_variant(tmp_path, name, change) for name, (change, _) in ABSURD.items()}
    out = tmp_path / "out"
    r = run_import("vllm-serve", *bad.values(), VLLM, out=out)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == len(ABSURD), r.stderr
    for name, (_, words) in ABSURD.items():
        (line,) = [ln for ln in lines if ln.startswith(f"benchdb: error: {bad[name]}: ")]
        assert words in line and len(line) < 400, line
    assert sources(out) == {str(VLLM)}


def test_a_completion_sent_in_one_event_imports(tmp_path):
    """A server that streams the whole completion in one event, then usage and [DONE] 50 us later,
    gives a TPOT of about 2e-7 s: honest (the live client records such a request as valid), so only
    the request's output over its whole life is bounded, and the file imports."""
    one = vllm_variant(
        tmp_path, "one-event", lambda d: _set_request(d, 0, ttfts=0.05, itls=[5e-5], output_lens=256, latencies=0.05005)
    )
    out = tmp_path / "out"
    r = run_import("vllm-serve", one, out=out)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    assert sources(out) == {str(one)}


def test_aiperf_and_guidellm_requests_name_their_absurd_or_negative_field(tmp_path):
    """The record formats: a negative AIPerf gap and a GuideLLM count past any request reject their
    file naming the field (not a recomputed metric's name)."""
    folder = tmp_path / "aiperf"
    folder.mkdir()
    src = SERVING / "aiperf" / "c2"
    (folder / "profile_export_aiperf.json").write_text((src / "profile_export_aiperf.json").read_text())
    records = [json.loads(line) for line in (src / "profile_export.jsonl").read_text().splitlines() if line.strip()]
    records[1]["metrics"]["inter_chunk_latency"]["value"][4] = -3.0
    (folder / "profile_export.jsonl").write_text("\n".join(json.dumps(x) for x in records) + "\n")
    r = run_import("aiperf", folder / "profile_export.jsonl", out=tmp_path / "out")
    line = rejected(r, folder / "profile_export.jsonl")
    assert "line 2: inter_chunk_latency is -3: a time or a length cannot be negative" in line, line

    doc = yaml.safe_load(GUIDELLM.read_text())
    doc["benchmarks"][0]["requests"]["successful"][0]["output_tokens"] = 10**12
    bad = tmp_path / "count_guidellm.yaml"
    bad.write_text(yaml.safe_dump(doc))
    r = run_import("guidellm", bad, out=tmp_path / "out")
    line = rejected(r, bad)
    assert ": output_tokens 1000000000000 is not a token count" in line, line


def test_a_duration_shorter_than_its_requests_rejects_the_file(tmp_path):
    """SGLang's requests carry no send times: the window is the tool's duration, and one shorter than
    a request it held would multiply every throughput."""
    lines = (SERVING / "sglang" / "c2_details.jsonl").read_text().splitlines()
    doc = json.loads(lines[0])
    doc["duration"] = 0.001
    bad = tmp_path / "short.jsonl"
    bad.write_text(json.dumps(doc) + "\n")
    r = run_import("sglang-serve", bad, out=tmp_path / "out")
    line = rejected(r, bad)
    assert "duration 0.001 s is shorter than its longest request" in line, line
