"""Serving trusts nothing a server says and leaves nothing behind: the stub server
answers with hostile usage values and an 8 MiB event line, a wrapper script that does not `exec`
serves it while `benchdb run` is interrupted or killed, and a --server command carries a secret.
Real sockets, real processes, real files; no mocks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import psutil
import pytest
from conftest import benchdb_cmd, child, cli, need_module

from benchdb.harness.timing import StopRule
from benchdb.schema import contract
from benchdb.schema.serving_metrics import LINE_LIMIT, StreamParser, summary
from benchdb.schema.serving_request import RequestRecord
from benchdb.text import hashed, redact_secrets

need_module("httpx", "benchdb[serving]")

STUB = f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}} --ttft-ms 2 --itl-ms 1"
MAX_TOKENS = 4
HOSTILE = {
    "1e23": "usage.completion_tokens 1e+23 is not a token count",
    "Infinity": "usage.completion_tokens Infinity is not a token count",
    "-1000": "usage.completion_tokens -1000 is not a token count",
    '"x"': 'usage.completion_tokens "x" is not a token count',
    "100000000000000000000000": "usage.completion_tokens 100000000000000000000000 is not a token count",
}
#: A wrapper that starts the server without `exec`: bash stays its parent (extra arguments ignored).
WRAPPER = """#!/bin/bash
"{python}" -m benchdb.testing.stub --port "$2" --model "$1" --ttft-ms 5 --itl-ms 20
echo "the stub ended"
"""


def _files(folder: Path) -> list[dict]:
    return [contract.read_footer(p).metadata for p in sorted(folder.rglob("*.parquet"))]


def _load_point(**stub):
    from benchdb.backends.openai.loadgen import LoadSpec, run
    from benchdb.testing.stub import StubConfig, StubServer

    rule = StopRule(warmup_iters=0, min_iters=12, min_time_s=0.0, max_time_s=30.0, max_iters=12, target_ci=1e-6)
    with StubServer(StubConfig(ttft_ms=2.0, itl_ms=1.0, **stub)) as server:
        return run(
            LoadSpec(
                base_url=server.url,
                model="stub",
                prompts=["a b c"],
                max_tokens=MAX_TOKENS,
                concurrency=2,
                rule=rule,
                request_timeout_s=30.0,
            )
        )


@pytest.mark.core
@pytest.mark.parametrize("value", list(HOSTILE))
def test_a_hostile_usage_fails_only_its_request(value):
    """Every third request's usage says completion_tokens = VALUE: those 4 requests are errors that
    say why, the other 8 are fine, and the throughput counts only their tokens (1e23 used to be
    recorded at 5e24 tokens/s; a string failed the whole load point with a TypeError)."""
    res = _load_point(bad_usage_every=3, bad_usage=value)
    s = summary(res.records, res.window_s)
    assert (s["requests"], s["ok"], s["errors"]) == (12, 8, 4)
    ((message, n),) = s["errors_by_message"].items()
    assert n == 4 and message.startswith(HOSTILE[value])
    assert all(r.tokens_out == MAX_TOKENS for r in res.measured if r.ok)
    assert s["output_tokens"] == 8 * MAX_TOKENS
    assert s["output_throughput"] == pytest.approx(8 * MAX_TOKENS / res.window_s)


@pytest.mark.core
def test_an_8_mib_event_line_fails_only_its_request():
    res = _load_point(long_line_every=3, long_line_bytes=8 << 20)
    s = summary(res.records, res.window_s)
    assert (s["ok"], s["errors"]) == (8, 4)
    assert s["errors_by_message"] == {"stream event longer than 1 MiB": 4}
    assert s["output_tokens"] == 8 * MAX_TOKENS


@pytest.mark.core
def test_the_stream_parser_stops_at_the_line_limit_and_holds_no_more():
    """8 MiB without a newline, in 64 KiB reads: refused at the read that passes 1 MiB, never
    buffering more (the old parser kept the whole line, rescanning it on every read)."""
    rec = RequestRecord(index=0, sent=0.0)
    parser = StreamParser(rec, chat=False, max_tokens=MAX_TOKENS)
    piece = b"x" * (64 << 10)
    fed = 0
    for fed in range(1, 129):
        if not parser.feed(b"data: " + piece if fed == 1 else piece, 0.1):
            break
        assert len(parser.buf) <= LINE_LIMIT
    assert (fed - 1) * len(piece) + 6 <= LINE_LIMIT < fed * len(piece) + 6  # the read that passed it
    assert rec.error == "stream event longer than 1 MiB"
    # many data lines of one event count together
    rec = RequestRecord(index=0, sent=0.0)
    parser = StreamParser(rec, chat=False)
    assert not parser.feed(b"".join(b"data: " + piece + b"\n" for _ in range(17)), 0.1)
    assert rec.error == "stream event longer than 1 MiB"


@pytest.mark.core
def test_usage_is_checked_against_the_chunks_and_max_tokens():
    def parse(usage: str, chunks: int = 2) -> RequestRecord:
        rec = RequestRecord(index=0, sent=0.0)
        p = StreamParser(rec, chat=False, max_tokens=MAX_TOKENS, max_prompt_tokens=100)
        for _ in range(chunks):
            assert p.feed(b'data: {"choices":[{"text":"a"}]}\n\n', 0.1)
        p.feed(b'data: {"choices":[],"usage":' + usage.encode() + b"}\n\n", 0.2)
        p.close(0.3)
        return rec

    assert parse('{"prompt_tokens":3,"completion_tokens":3}').error is None
    assert parse('{"prompt_tokens":3,"completion_tokens":3.0}').output_tokens == 3
    assert "at least the 2 content chunks" in parse('{"completion_tokens":1}').error
    assert "at most max_tokens 4" in parse('{"completion_tokens":5}').error
    assert parse('{"prompt_tokens":101}').error.startswith("usage.prompt_tokens 101 is more than")
    for bad in ("NaN", "-1", "2.5", "true", '"3"', "[3]", "1e300"):
        assert "is not a token count" in parse(f'{{"prompt_tokens":{bad}}}').error, bad
    # past exact integers whether written as a float or an integer, also where max_tokens is unknown
    rec = RequestRecord(index=0, sent=0.0)
    p = StreamParser(rec, chat=False, max_tokens=None)
    p.feed(b'data: {"choices":[],"usage":{"completion_tokens":100000000000000000000000}}\n\n', 0.1)
    assert "is not a token count" in (rec.error or "")


@pytest.mark.core
def test_the_live_client_and_the_importers_share_one_token_bound():
    """A count under exact integers but past any request (10**12 tokens: 3e12 tokens/s for a user)
    fails its request where no max_tokens bounds it, by the bound every importer applies too."""
    from benchdb.interop.serving_fields import tokens
    from benchdb.interop.writer import SourceError
    from benchdb.schema.serving_request import MAX_REQUEST_TOKENS

    for n in (10**12, MAX_REQUEST_TOKENS + 1):
        rec = RequestRecord(index=0, sent=0.0)
        p = StreamParser(rec, chat=False, max_tokens=None, max_prompt_tokens=None)
        p.feed(b'data: {"choices":[],"usage":{"prompt_tokens":%d}}\n\n' % n, 0.1)
        p.close(0.2)
        assert (rec.error or "").startswith(f"usage.prompt_tokens {n} is not a token count"), rec.error
        with pytest.raises(SourceError, match=f"output_lens.0. {n} is not a token count"):
            tokens(n, "output_lens[0]")
    rec = RequestRecord(index=0, sent=0.0)
    p = StreamParser(rec, chat=False, max_tokens=None, max_prompt_tokens=None)
    p.feed(b'data: {"choices":[],"usage":{"prompt_tokens":%d}}\n\n' % MAX_REQUEST_TOKENS, 0.1)
    p.close(0.2)
    assert rec.error is None and rec.input_tokens == MAX_REQUEST_TOKENS


@pytest.mark.slow
@pytest.mark.parametrize("value", ["1e23", "Infinity"])
def test_a_hostile_usage_run_is_recorded_and_ingested_honestly(tmp_path, value):
    """End to end: the point is ok with its hostile requests counted as errors, ingest takes the file,
    and serving_points shows the throughput of the honest requests only."""
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "stub-hostile",
        "--server",
        # one hostile usage in 12 requests: within the failed-request limit (10 %), so the point stays valid
        STUB + f" --bad-usage-every 12 --bad-usage {value}",
        "--concurrency",
        "2",
        "--out",
        str(out),
        "--warmup",
        "0",
        "--min-iters",
        "8",
        "--min-time",
        "0",
        "--max-time",
        "20",
        "--max-requests",
        "12",
        "--seq-lens",
        "8",
        "--gen-tokens",
        str(MAX_TOKENS),
    )
    assert proc.returncode == 0, proc.stderr
    (meta,) = _files(out)
    assert meta["scenario"]["status"] == "ok" and sum(meta["scenario"]["extra"]["errors"].values()) == 1
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT status, validity FROM results").fetchall() == [("ok", "valid")]
        most, total, errors = con.execute("""
            SELECT max(value) FILTER (metric = 'output_tokens'), sum(value) FILTER (metric = 'output_tokens'),
                   count(*) FILTER (metric = 'request_error') FROM samples""").fetchone()
        window, throughput = con.execute("""
            SELECT max(value) FILTER (metric = 'window_s'), max(value) FILTER (metric = 'output_throughput')
            FROM samples""").fetchone()
        assert con.execute("SELECT count(*) FROM serving_points").fetchone()[0] == 1
    assert (most, total, errors) == (MAX_TOKENS, 11 * MAX_TOKENS, 1)
    assert throughput == pytest.approx(total / window)


def _start_run(tmp_path: Path, server: str, *extra: str):
    """`benchdb run` of the openai backend for two minutes, for a ``with`` block (:func:`conftest.child`)."""
    return child(
        [
            sys.executable,
            "-m",
            "benchdb",
            "run",
            "--backend",
            "openai",
            "--model",
            "stub-tree",
            "--server",
            server,
            "--concurrency",
            "2",
            "--out",
            str(tmp_path / "res"),
            "--warmup",
            "0",
            "--min-iters",
            "100000",
            "--min-time",
            "120",
            "--max-time",
            "120",
            "--seq-lens",
            "8",
            "--gen-tokens",
            "200",
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )


def _serving_tree(run: subprocess.Popen) -> list[psutil.Process]:
    """Every process under the run once the stub serves requests (an established connection)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert run.poll() is None, run.stderr.read().decode() if run.stderr else ""
        tree = psutil.Process(run.pid).children(recursive=True)
        for proc in tree:
            try:
                if "benchdb.testing.stub" in " ".join(proc.cmdline()) and any(
                    c.status == psutil.CONN_ESTABLISHED for c in proc.net_connections()
                ):
                    return tree
            except psutil.Error:
                continue
        time.sleep(0.2)
    raise AssertionError("the stub never served a request")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_wrapper_script_server_ends_with_the_run(tmp_path, sig):
    """Ctrl-C (SIGINT to `benchdb run`), SIGTERM or SIGKILL: within seconds no process of the run's
    tree is left -- not the measuring child, not the wrapper, not the server it started without
    `exec` (which used to be re-parented to PID 1 and run on)."""
    wrapper = tmp_path / "serve.sh"
    wrapper.write_text(WRAPPER.format(python=sys.executable))
    wrapper.chmod(0o755)
    tree: list[psutil.Process] = []
    with _start_run(tmp_path, f"{wrapper} {{model}} {{port}}") as run:
        try:
            tree = _serving_tree(run)
            assert any("serve.sh" in " ".join(p.cmdline()) for p in tree)
            os.kill(run.pid, sig)
            run.wait(30)
            _, alive = psutil.wait_procs(tree, timeout=15)
            assert [" ".join(p.cmdline()) for p in alive] == []
        finally:  # the server may have left the run's process group: it is ended by name, if it has to be
            for proc in tree:
                try:
                    proc.kill()
                except psutil.Error:
                    pass
    assert not list(tmp_path.glob("benchdb-server-*"))  # no log file left behind either


@pytest.mark.core
def test_secrets_on_a_command_line_are_redacted():
    cmd = "HF_TOKEN=hf_1 vllm serve {model} --port {port} --api-key sk-abc123 --hf-token=x --max-num-batched-tokens 8"
    assert redact_secrets(cmd) == (
        f"HF_TOKEN={hashed('hf_1')} vllm serve {{model}} --port {{port}} --api-key "
        f"{hashed('sk-abc123')} --hf-token={hashed('x')} --max-num-batched-tokens 8"
    )
    plain = "transformers serve {model} --port {port} --tokenizer /t --password-file p"
    assert redact_secrets(plain) == plain


@pytest.mark.slow
def test_a_secret_on_the_server_command_is_stored_redacted_and_no_log_is_left(tmp_path):
    wrapper = tmp_path / "serve.sh"
    wrapper.write_text(WRAPPER.format(python=sys.executable))
    wrapper.chmod(0o755)
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "stub-secret",
        "--server",
        f"{wrapper} {{model}} {{port}} --api-key sk-abc123",
        "--concurrency",
        "2",
        "--out",
        str(out),
        "--warmup",
        "0",
        "--min-iters",
        "6",
        "--min-time",
        "0",
        "--max-time",
        "20",
        "--max-requests",
        "6",
        "--seq-lens",
        "8",
        "--gen-tokens",
        "4",
        env={"TMPDIR": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    (meta,) = _files(out)
    sc = meta["scenario"]
    assert sc["status"] == "ok"
    assert sc["options"]["server"] == f"{wrapper} {{model}} {{port}} --api-key {hashed('sk-abc123')}"
    assert sc["extra"]["server"]["command"] == sc["options"]["server"]
    assert "sk-abc123" not in json.dumps(meta)  # nor in the run's config
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    with duckdb.connect(str(db), read_only=True) as con:
        (options,) = con.execute("SELECT options FROM results").fetchone()
    assert "sk-abc123" not in str(options) and hashed("sk-abc123") in str(options)
    # a server that fails at start: its log's tail in the error, its log file gone
    boom = tmp_path / "boom.py"
    boom.write_text("import sys\nprint('boom: no GPU here', flush=True)\nsys.exit(3)\n")
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "m",
        "--server",
        f"{sys.executable} {boom} {{model}} {{port}}",
        "--out",
        str(tmp_path / "failed"),
        env={"TMPDIR": str(tmp_path)},
    )
    assert proc.returncode == 3, proc.stderr
    (meta,) = _files(tmp_path / "failed")
    assert "code 3" in meta["scenario"]["error"] and "boom: no GPU here" in meta["scenario"]["error"]
    assert not list(tmp_path.glob("benchdb-server-*"))


# -- impossible token accounting in another tool's file ----------------------------------------------

TURNS = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "turns"
SGLANG = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "sglang" / "c2_details.jsonl"
ZERO = "0 input tokens for a completed turn of a conversation"


def _more(cached: int, given: int) -> str:
    return f"{cached} cached prompt tokens of {given} input tokens"


def _guidellm(cached: bool):
    """The multi-turn GuideLLM file, its first later turn claiming one cached token more than its
    prompt (or a prompt of 0 tokens); that request's number in send order and the reason expected."""
    doc = json.loads((TURNS / "guidellm" / "guidellm_multiturn_c2.json").read_text())
    ok = doc["benchmarks"][0]["requests"]["successful"]
    req = next(r for r in ok if r["info"]["turn_index"] > 0)
    n = req["prompt_tokens"]
    if cached:
        req["cached_tokens"] = n + 1
    else:
        req["prompt_tokens"] = 0
    order = sorted(ok, key=lambda r: r["info"]["timings"]["request_start"])
    return "guidellm", {"multiturn.json": json.dumps(doc)}, order.index(req), _more(n + 1, n) if cached else ZERO


def _aiperf(cached: bool):
    """The same for the multi-turn AIPerf run's records."""
    folder = TURNS / "aiperf_multiturn"
    docs = [json.loads(x) for x in (folder / "profile_export.jsonl").read_text().splitlines()]
    m = next(d for d in docs if d["metadata"]["turn_index"] > 0)
    n = m["metrics"]["usage_prompt_tokens"]["value"]
    key, value = ("usage_prompt_cache_read_tokens", n + 1) if cached else ("usage_prompt_tokens", 0)
    m["metrics"][key] = {"value": value, "unit": "tokens"}
    order = sorted(docs, key=lambda d: d["metadata"]["request_start_ns"])
    files = {
        "profile_export.jsonl": "\n".join(json.dumps(d) for d in docs) + "\n",
        "profile_export_aiperf.json": (folder / "profile_export_aiperf.json").read_text(),
    }
    return "aiperf", files, order.index(m), _more(n + 1, n) if cached else ZERO


def _sglang(cached: bool, k: int = 3):
    """SGLang's single-turn line with a --cache-report whose request ``k`` has one cached token more
    than its input (its details say the server reported them)."""
    doc = json.loads(SGLANG.read_text().splitlines()[0])
    n, size = doc["input_lens"][k], len(doc["input_lens"])
    doc["cached_tokens"] = [0] * size
    doc["cached_tokens_details"] = [{"device": 0, "host": 0, "storage": 0}] * size
    doc["cached_tokens"][k] = n + 1
    return "sglang-serve", {"cached.jsonl": json.dumps(doc) + "\n"}, k, _more(n + 1, n)


@pytest.mark.parametrize(
    "make, cached",
    [(_guidellm, True), (_guidellm, False), (_aiperf, True), (_aiperf, False), (_sglang, True)],
    ids=["guidellm-cached", "guidellm-zero", "aiperf-cached", "aiperf-zero", "sglang-cached"],
)
def test_a_file_with_impossible_token_accounting_is_refused_in_one_line(tmp_path, make, cached):
    """More cached tokens than a request's prompt, or a turn of a conversation with no input tokens:
    no server counts so, so the file is refused, naming it, the request and its counts."""
    fmt, files, index, why = make(cached)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    src = tmp_path / next(iter(files))
    model = ("--model", "m") if fmt == "sglang-serve" else ()
    r = cli("import", fmt, src, "--out", tmp_path / "out", *model)
    errors = [line for line in r.output.splitlines() if line.startswith("benchdb: error:")]
    assert r.exit_code == 1 and len(errors) == 1, r.output
    assert str(src) in errors[0] and f"request {index}: {why}" in errors[0], errors
    assert not list((tmp_path / "out").rglob("*.parquet"))


@pytest.mark.parametrize("value", [-1, "1", 1.5, True, 1 << 20])
def test_a_turn_index_that_is_none_refuses_the_file_by_its_field(tmp_path, value):
    doc = json.loads((TURNS / "guidellm" / "guidellm_multiturn_c2.json").read_text())
    ok = doc["benchmarks"][0]["requests"]["successful"]
    req = next(r for r in ok if r["info"]["turn_index"] > 0)
    req["info"]["turn_index"] = value
    src = tmp_path / "turns.json"
    src.write_text(json.dumps(doc))
    r = cli("import", "guidellm", src, "--out", tmp_path / "out")
    assert r.exit_code == 1, r.output
    assert f"request {req['request_id']}: info.turn_index is {value!r}, not a turn index" in r.output
