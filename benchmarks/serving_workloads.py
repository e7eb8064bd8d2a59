"""Do benchdb and its peers read multi-turn and replayed-trace traffic at the truth?

The stub (benchdb.testing.stub, its own process, started afresh for every client so that each meets
a cold cache) models a prefix cache: a request's first token comes after a base TTFT plus a prefill
time for each prompt word its cache of 16-word blocks does not hold, then one token every ITL
(part A: 100 ms + 0.5 ms a word, 5 ms; part B: 100 ms + 0.2 ms a word, 2 ms). It logs every
request's truth (prompt words, cached words, the TTFT it aimed at from reading the request), handed
back when the client is done. A client's TTFT also holds the loopback and the scheduling between two
processes (about 1.5 ms on a busy 2-core machine, the same for every client): the base TTFT is a
real server's order, not the stub's few ms, so that this is not most of what is judged.

- Part A, multi-turn: benchdb (``--workload multi-turn``) and GuideLLM (synthetic data, ``turns=``),
  4 turns, closed loop at the same concurrency, the same request count, /v1/completions (each turn
  re-sends the conversation: earlier prompts, the stub's replies, the new message).
- Part B, trace replay: one generated Mooncake trace (timestamp ms, input_length, output_length,
  hash_ids, lines sharing leading hash ids so that cache hits happen; blocks of 64), replayed at
  speed 1 by benchdb (``--workload trace``, ``--request-rate trace:1``) and AIPerf
  (``mooncake_trace``, fixed schedule).

How a request is matched with its truth: every client records the server's usage per request
(prompt tokens, cached tokens: the stub's prompt words and cached words). Each record takes one
entry of the stub's log with the same pair; a record with no such entry counts as unmatched (the
client recorded a usage the stub never sent). The truth is then the stub's own TTFT for that
request. Figures, per client:

- TTFT: the median over requests of measured / truth, first turns and later turns apart (part A),
  requests without and with cached words apart (part B); ok within 2 %;
- ITL: per request (last token - first token) / (tokens - 1) on the client's own timestamps, the
  server's token count; the median against --itl-ms, ok within 2 %;
- part B, send lag: each request's send time against the trace's clock. AIPerf exports no start
  of its schedule, so for every client the clock's origin is fitted as the median of (send -
  timestamp) and |send - timestamp - origin| is given, p50 and p99 (ok: p99 within 1 ms).

A word is a token to the stub; the peers make their prompts with a tokenizer (the tiny LLM's BPE,
about 4 tokens a word), so their prompts hold fewer words for the same token counts: each client is
held to its own requests' truth, and the table gives the median prompt words.

    python benchmarks/serving_workloads.py [--peer-dir /tmp/benchdb-peers] [--aiperf PATH]
    python benchmarks/serving_workloads.py --small   # checks that the script works: seconds, no peer

--small runs no peer: installing either (each pulls torch) takes longer than the whole check. Its
GuideLLM and AIPerf rows replay a recorded run of each at --small's settings
(benchmarks/recorded/serving_workloads/): the peer's own output, trimmed to what the reading here
reads, and the stub's truth log of that same run, since a record is judged against its own run's
truth. The output goes through the same reading as a live run's, then the same judging.
`--small --record-peers DIR` runs the peers of --peer-dir and records them anew.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serving_client as sc  # noqa: E402

#: Peer versions whose flags this script uses (GuideLLM's multi-turn synthetic data: 0.8).
PINS = {"guidellm": "==0.8.1", "aiperf": "==0.13.0"}
#: The peers' prompts are made in tokens of the tiny LLM's BPE, about this many a stub word.
TOKENS_PER_WORD = 4
#: The peers' runs at --small's settings, replayed by --small (see the module's docstring).
RECORDED = Path(__file__).resolve().parent / "recorded" / "serving_workloads"
#: The peers' names as their projects write them, for the lines that say a run is replayed.
TOOLS = {"guidellm": "GuideLLM", "aiperf": "AIPerf"}
#: A client's run: its records, the stub's truth log they are judged against, and why it gave none.
Run = Callable[[], tuple[list[dict[str, Any]], list[Any], str]]


# -- the stub, its truth log handed back -------------------------------------------------------
def stub_host(ttft_ms: float, itl_ms: float, prefill_ms: float) -> None:
    """This script's --stub-host mode: the stub until stdin closes, then its truth log as JSON."""
    from benchdb.testing.stub import StubConfig, StubServer

    with StubServer(StubConfig(ttft_ms=ttft_ms, itl_ms=itl_ms, prefill_ms=prefill_ms)) as stub:
        print(stub.url, flush=True)
        sys.stdin.read()
        log = [[t.prompt_words, t.cached_words, t.ttft_s * 1e3] for t in stub.stub.cache.log]
    print(json.dumps(log), flush=True)


@contextlib.contextmanager
def stub(ttft_ms: float, itl_ms: float, prefill_ms: float) -> Iterator[tuple[str, list[Any]]]:
    """(url, truth): ``truth`` is filled with the stub's log, [prompt words, cached words, TTFT ms]
    per request, when the block ends."""
    args = [str(x) for x in (ttft_ms, itl_ms, prefill_ms)]
    cmd = [sys.executable, str(Path(__file__).resolve()), "--stub-host", *args]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=sc.ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    truth: list[Any] = []
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise SystemExit(f"the stub did not start: {url!r}")
        yield url, truth
        proc.stdin.close()
        truth.extend(json.loads(proc.stdout.read()))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


# -- the clients: each one a subprocess writing its requests as [{...}] ------------------------
def benchdb_run(job: dict[str, Any]) -> None:
    """This script's --benchdb-run mode: one load point of a workload, its measured requests."""
    from benchdb.backends.openai import workers as pool
    from benchdb.backends.openai.loadgen import LoadSpec
    from benchdb.harness.timing import StopRule
    from benchdb.schema.serving_request import request_metrics

    n, trace = job["requests"], job["workload"].startswith("trace:")
    rule = StopRule(warmup_iters=0, min_iters=n, min_time_s=0.0, max_time_s=300.0, max_iters=n, target_ci=1e-9)
    spec = LoadSpec(
        base_url=job["url"],
        model="stub",
        prompts=[],
        concurrency=None if trace else job["concurrency"],
        rate=1.0 if trace else None,
        arrival="trace" if trace else "poisson",
        warmup_requests=1 if trace else job["concurrency"],
        rule=rule,
        request_timeout_s=60.0,
        workload=job["workload"],
    )
    res = pool.run(spec, 1)
    out: list[dict[str, Any]] = []
    for r in res.measured:
        m = request_metrics(r)
        if m is None or m.ttft is None:
            out.append({"error": r.error})
            continue
        toks = r.output_tokens or 0
        out.append(
            {
                "turn": r.turn,
                "ttft": m.ttft * 1e3,
                "itl": (r.chunks[-1][0] - r.chunks[0][0]) / (toks - 1) * 1e3 if toks > 1 else None,
                "prompt": r.input_tokens,
                "cached": r.cached_tokens,
                "send": r.sent * 1e3,
                "at": (r.scheduled - res.window_start) * 1e3 if r.scheduled is not None else None,
                "lag": (r.sent - r.scheduled) * 1e3 if r.scheduled is not None else None,
            }
        )
    Path(job["out"]).write_text(json.dumps(out))


def run_benchdb(url: str, workload: str, conc: int, n: int, **_: Any) -> tuple[list[dict[str, Any]], str]:
    with tempfile.TemporaryDirectory() as tmp:
        job: dict[str, Any] = {"url": url, "workload": workload, "concurrency": conc, "requests": n}
        job["out"] = f"{tmp}/r.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--benchdb-run", json.dumps(job)]
        code, tail, _cpu = sc.run_tree(cmd)
        if code != 0 or not Path(job["out"]).exists():
            return [], tail
        return json.loads(Path(job["out"]).read_text()), ""


def run_guidellm(
    url: str, data: str, conc: int, n: int, exe: str, tok: Path, record: Path | None = None, **_: Any
) -> tuple[list[Any], str]:
    """GuideLLM run to its JSON report, read by :func:`read_guidellm`; ``record``: a folder that
    keeps the report, trimmed to what that reads."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "guidellm.json"
        cmd = [exe, "run", "--backend", f"kind=openai_http,target={url},model=stub,request_format=/v1/completions"]
        cmd += ["--profile", f"kind=concurrent,streams={conc}", "--data", data]
        cmd += ["--tokenizer", f"kind=huggingface_auto,model={tok}", "--constraint", f"kind=max_requests,count={n}"]
        cmd += ["--output", f"kind=json,path={out}", "--disable-console"]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        code, tail, _cpu = sc.run_tree(cmd, env)
        if code != 0 or not out.exists():
            return [], tail
        got = read_guidellm(out)
        if record is not None:
            trimmed = json.dumps(trim_guidellm(json.loads(out.read_text())))
            keep(record, GUIDELLM_REPORT, trimmed, got, read_guidellm)
    return got, ""


#: What :func:`read_guidellm` reads of a request record, beside info.turn_index (all a recorded
#: report keeps of it).
GUIDELLM_FIELDS = ("time_to_first_token_ms", "inter_token_latency_ms", "prompt_tokens", "cached_tokens")
#: The recorded report's name in a recording folder (".gz" added where it is large).
GUIDELLM_REPORT = "guidellm_report.json"


def read_guidellm(report: Path) -> list[dict[str, Any]]:
    """GuideLLM's JSON report: every request under benchmarks[-1].requests (none sampled away)."""
    reqs = (json.loads(_text(report)).get("benchmarks") or [{}])[-1].get("requests") or {}
    got: list[dict[str, Any]] = [{"error": "errored"} for _ in reqs.get("errored") or []]
    for r in reqs.get("successful") or []:
        got.append(
            {
                "turn": int(r["info"]["turn_index"]) + 1,
                "ttft": r.get("time_to_first_token_ms"),
                "itl": r.get("inter_token_latency_ms"),
                "prompt": r.get("prompt_tokens"),
                "cached": r.get("cached_tokens"),
            }
        )
    return got


def trim_guidellm(doc: dict[str, Any]) -> dict[str, Any]:
    """The report with only what :func:`read_guidellm` reads: its last benchmark's requests, each
    with GUIDELLM_FIELDS and its turn (an errored one as an empty record: only counted)."""
    reqs = (doc.get("benchmarks") or [{}])[-1].get("requests") or {}
    ok = [
        {**{k: r.get(k) for k in GUIDELLM_FIELDS}, "info": {"turn_index": r["info"]["turn_index"]}}
        for r in reqs.get("successful") or []
    ]
    return {"benchmarks": [{"requests": {"successful": ok, "errored": [{} for _ in reqs.get("errored") or []]}}]}


def run_aiperf(
    url: str, trace: Path, block: int, exe: str, tok: Path, record: Path | None = None, **_: Any
) -> tuple[list[Any], str]:
    """AIPerf run to its per-request export, read by :func:`read_aiperf`; ``record``: a folder that
    keeps the export, trimmed to what that reads, and the trace it replayed."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [exe, "profile", "--model", "stub", "--url", url, "--endpoint-type", "completions", "--streaming"]
        cmd += ["--input-file", str(trace), "--custom-dataset-type", "mooncake_trace", "--fixed-schedule"]
        cmd += ["--fixed-schedule-auto-offset", "--prompt-input-tokens-block-size", str(block)]
        cmd += ["--use-server-token-count", "--tokenizer", HUB_NAME, "--output-artifact-dir", tmp, "--ui", "none"]
        code, tail, _cpu = sc.run_tree(cmd, hub_cache(tok, Path(tmp)))
        path = Path(tmp) / "profile_export.jsonl"
        if code != 0 or not path.exists():
            return [], tail
        got = read_aiperf(path, trace)
        if record is not None:
            (record / AIPERF_TRACE).write_text(trace.read_text())
            trimmed = trim_aiperf(path.read_text())
            keep(record, AIPERF_EXPORT, trimmed, got, lambda p: read_aiperf(p, record / AIPERF_TRACE))
    return got, ""


#: What :func:`read_aiperf` reads of a record's metrics (all a recorded export keeps of them, with
#: metadata's request_start_ns and session_num, and the error).
AIPERF_METRICS = ("time_to_first_token", "inter_token_latency", "usage_prompt_tokens", "usage_prompt_cache_read_tokens")
#: The recorded export's and trace's names in a recording folder (".gz" added where large).
AIPERF_EXPORT, AIPERF_TRACE = "aiperf_profile_export.jsonl", "aiperf_trace.jsonl"


def read_aiperf(export: Path, trace: Path) -> list[dict[str, Any]]:
    """AIPerf's per-request export (profile_export.jsonl): a record's session_num is its trace line,
    request_start_ns its send; token counts from the server's usage (--use-server-token-count)."""
    lines = [json.loads(x) for x in _text(export).splitlines() if x.strip()]
    stamps = [json.loads(x)["timestamp"] for x in trace.read_text().splitlines() if x.strip()]
    got: list[dict[str, Any]] = []
    for rec in lines:
        meta = rec.get("metadata") or {}
        v = {k: x.get("value") for k, x in (rec.get("metrics") or {}).items() if isinstance(x, dict)}
        if rec.get("error") or v.get("time_to_first_token") is None:
            got.append({"error": rec.get("error") or "no TTFT"})
            continue
        got.append(
            {
                "ttft": v["time_to_first_token"],
                "itl": v.get("inter_token_latency"),
                "prompt": v.get("usage_prompt_tokens"),
                "cached": v.get("usage_prompt_cache_read_tokens"),
                "send": meta["request_start_ns"] / 1e6,
                "at": stamps[int(meta["session_num"])],
            }
        )
    return got


def trim_aiperf(export: str) -> str:
    """The export with only what :func:`read_aiperf` reads of each record."""
    out = []
    for line in export.splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        meta, metrics = rec.get("metadata") or {}, rec.get("metrics") or {}
        kept: dict[str, Any] = {
            "metadata": {k: meta[k] for k in ("request_start_ns", "session_num") if k in meta},
            "metrics": {k: metrics[k] for k in AIPERF_METRICS if k in metrics},
        }
        if rec.get("error"):
            kept["error"] = rec["error"]
        out.append(json.dumps(kept))
    return "\n".join(out) + "\n"


#: The tokenizer's name in the hub cache made for AIPerf (:func:`hub_cache`).
HUB_NAME = "benchdb/tiny-llm"


def hub_cache(tok: Path, tmp: Path) -> dict[str, str]:
    """The environment for AIPerf, offline, with the tokenizer folder as a hub cache's snapshot of
    HUB_NAME: AIPerf 0.13.0's prompt-synthesis workers force offline mode, where it looks a local
    folder up as a hub repo id and fails (its nightly takes the folder as it is)."""
    snap = tmp / "hub" / f"models--{HUB_NAME.replace('/', '--')}" / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    for f in tok.iterdir():
        (snap / f.name).symlink_to(f.resolve())
    (snap.parent.parent / "refs").mkdir()
    (snap.parent.parent / "refs" / "main").write_text("0" * 40)
    return {**os.environ, "HF_HUB_CACHE": str(tmp / "hub"), "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


# -- recorded peer runs ------------------------------------------------------------------------
#: A recorded file past this many bytes is kept gzipped (name + ".gz").
PLAIN_BYTES = 16_000


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _recorded(folder: Path, name: str) -> Path:
    """folder/name, or its gzipped form where that is what was kept."""
    return folder / name if (folder / name).exists() else folder / f"{name}.gz"


def keep(folder: Path, name: str, text: str, got: list[dict[str, Any]], read: Callable[[Path], Any]) -> None:
    """Keep a peer's trimmed output, after checking that it reads as the untrimmed one did: a
    replay that read otherwise than the run it stands for would judge something else."""
    for old in (folder / name, folder / f"{name}.gz"):
        old.unlink(missing_ok=True)
    data = text.encode()
    path = folder / name if len(data) <= PLAIN_BYTES else folder / f"{name}.gz"
    path.write_bytes(data if path.suffix != ".gz" else gzip.compress(data, mtime=0))
    if read(path) != got:
        raise SystemExit(f"{path}: the trimmed output does not read as the peer's own did")


def keep_run(folder: Path, peer: str, truth: list[Any], settings: dict[str, Any], exe: str) -> None:
    """The stub's truth log of the peer's run beside its output, and in runs.json the settings it
    ran at (a replay at others is refused) and the versions that made it."""
    rows = ",\n".join(json.dumps([p, c, round(t, 4)]) for p, c, t in truth)
    (folder / f"{peer}_truth.json").write_text(f"[\n{rows}\n]\n")
    runs_file = folder / "runs.json"
    runs = json.loads(runs_file.read_text()) if runs_file.exists() else {}
    runs[peer] = {"settings": settings, "versions": versions(exe, peer)}
    runs_file.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")


def versions(exe: str, peer: str) -> dict[str, str]:
    """The peer's version and those of the torch and transformers of its venv (its python beside
    ``exe``)."""
    code = "import importlib.metadata as m, json, sys\nout = {}\nfor p in sys.argv[1:]:\n"
    code += "    try:\n        out[p] = m.version(p)\n    except m.PackageNotFoundError:\n        pass\n"
    code += "print(json.dumps(out))"
    python = Path(exe).parent / "python"
    p = subprocess.run([str(python), "-c", code, peer, "torch", "transformers"], capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else {peer: "unknown"}


def live(stub_ms: list[float], fn: Callable[..., tuple[list[Any], str]], **kw: Any) -> Run:
    """A client run against a fresh stub; a peer's, with ``record``, kept with the stub's truth."""
    record: Path | None = kw.get("record")
    peer, settings = kw.pop("peer", ""), kw.pop("settings", {})

    def run() -> tuple[list[dict[str, Any]], list[Any], str]:
        with stub(*stub_ms) as (url, truth):
            got, why = fn(url, **kw)
        if record is not None and got:
            keep_run(record, peer, truth, {"stub_ms": stub_ms, **settings}, kw["exe"])
        return got, truth, why

    return run


def replayed(peer: str, stub_ms: list[float], settings: dict[str, Any], folder: Path) -> Run:
    """A recorded run of the peer (no peer run, no stub started): its output read as a live run's
    is, with the truth log of the stub it ran against."""

    def run() -> tuple[list[dict[str, Any]], list[Any], str]:
        entry = json.loads((folder / "runs.json").read_text()).get(peer)
        want = {"stub_ms": stub_ms, **settings}
        if entry is None or entry["settings"] != want:
            return [], [], f"no run recorded at these settings ({want}) in {folder}"
        truth = json.loads((folder / f"{peer}_truth.json").read_text())
        if peer == "guidellm":
            return read_guidellm(_recorded(folder, GUIDELLM_REPORT)), truth, ""
        return read_aiperf(_recorded(folder, AIPERF_EXPORT), folder / AIPERF_TRACE), truth, ""

    return run


# -- the trace ---------------------------------------------------------------------------------
def make_trace(path: Path, lines: int, gap_ms: float, block: int, out: tuple[int, int]) -> None:
    """A Mooncake trace: Poisson arrivals; a line opens with 0-3 blocks of one of 8 documents (the
    blocks every line with that document shares: 0, a line no cache can serve) and ends in 1-2
    blocks of its own, the last cut short."""
    rng = random.Random(63)
    t, own = 0.0, 1000
    with path.open("w") as f:
        for _ in range(lines):
            t += rng.expovariate(1 / gap_ms)
            doc, mine = rng.randrange(8), rng.randint(1, 2)
            hashes = [10 * doc + k for k in range(rng.randint(0, 3))] + list(range(own, own + mine))
            own += mine
            length = (len(hashes) - 1) * block + rng.randint(block // 2, block)
            line = {"timestamp": round(t, 1), "input_length": length, "output_length": rng.randint(*out)}
            f.write(json.dumps({**line, "hash_ids": hashes}) + "\n")


# -- judging -----------------------------------------------------------------------------------
def match(got: list[dict[str, Any]], truth: list[Any]) -> tuple[list[tuple[dict[str, Any], float]], int]:
    """Each successful record with the truth of a stub request of the same (prompt, cached) words;
    and how many records found none."""
    pool: dict[tuple[int, int], list[float]] = {}
    for prompt, cached, ttft in truth:
        pool.setdefault((prompt, cached), []).append(ttft)
    pairs, unmatched = [], 0
    for r in got:
        if "error" in r:
            continue
        left = pool.get((r["prompt"], r["cached"] or 0))
        if left:
            pairs.append((r, left.pop()))
        else:
            unmatched += 1
    return pairs, unmatched


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def judge(name: str, part: str, got: list[dict[str, Any]], truth: list[Any], a: argparse.Namespace) -> None:
    """One table line: the client's figures against the truth, and its verdict."""
    pairs, unmatched = match(got, truth)
    errors = sum("error" in r for r in got)
    if not pairs:
        print(f"{part:10} {name:{NAME}} no request matched the stub's truth ({errors} errors, {unmatched} unmatched)")
        return
    later = (lambda r: (r.get("turn") or 1) > 1) if part == "multi-turn" else (lambda r: bool(r["cached"]))
    ratios = [statistics.median([r["ttft"] / t for r, t in pairs if later(r) == k] or [0.0]) for k in (False, True)]
    over = statistics.median(r["ttft"] - t for r, t in pairs)
    itl = statistics.median([r["itl"] for r, _ in pairs if r.get("itl") is not None] or [0.0])
    words = [statistics.median([r["prompt"] for r, _ in pairs if later(r) == k] or [0]) for k in (False, True)]
    hit = 100 * sum(r["cached"] or 0 for r, _ in pairs) / max(1, sum(r["prompt"] for r, _ in pairs))
    ok = unmatched == 0 and all(abs(v - 1) <= 0.02 for v in ratios) and abs(itl - a.itl) <= 0.02 * a.itl
    lag = "-"
    if part == "trace":  # the trace clock's origin: the median offset (AIPerf exports none of its own)
        offsets = [r["send"] - r["at"] for r, _ in pairs]
        lags = [abs(x - statistics.median(offsets)) for x in offsets]
        lag = f"{pct(lags, 0.5):.2f}/{pct(lags, 0.99):.2f}"
        ok = ok and pct(lags, 0.99) <= 1.0
    print(
        f"{part:10} {name:{NAME}} {len(pairs):5d} {errors + unmatched:4d} {ratios[0]:7.3f} {ratios[1]:7.3f} "
        f"{over:+7.2f} {itl:7.3f} {words[0]:6.0f} {words[1]:6.0f} {hit:5.1f} {lag:>11} {'ok' if ok else 'NOT ok'}",
        flush=True,
    )
    own = [r["lag"] for r, _ in pairs if r.get("lag") is not None]
    if own:
        p50, p99 = pct(own, 0.5), pct(own, 0.99)
        print(f"{'':10} {name:{NAME}} its own send lag (send - its schedule): p50 {p50:.2f}, p99 {p99:.2f} ms")


# -- the two parts -----------------------------------------------------------------------------
def part(name: str, a: argparse.Namespace, clients: list[tuple[str, Run]]) -> None:
    print(
        f"\n{name}: stub TTFT {a.ttft:g} ms + {a.prefill:g} ms per uncached word, ITL {a.itl:g} ms. TTFT: median of "
        "measured/truth per class, and of measured - truth (ms); ITL: median ms; words: median prompt words",
        flush=True,
    )
    cls = ("first", "later") if name == "multi-turn" else ("miss", "hit")
    print(
        f"{'part':10} {'client':{NAME}} {'reqs':>5} {'bad':>4} {cls[0]:>7} {cls[1]:>7} {'+ms':>7} {'ITL ms':>7} "
        f"{cls[0]:>6} {cls[1]:>6} {'hit %':>5} {'lag p50/p99':>11} verdict"
    )
    for client, run in clients:
        got, truth, why = run()
        if not got:
            print(f"{name:10} {client:{NAME}} failed: {why}", flush=True)
            continue
        judge(client, name, got, truth, a)


def peer(name: str, a: argparse.Namespace) -> dict[str, Any] | None:
    """How this run gets the peer's records: {"exe", "tok"} to run it (and "record", a folder to
    keep the run in), or {"replay": folder} for its recorded run; None (said so) where neither."""
    if name not in a.peers.split(","):
        print(f"{name}: skipped (not in --peers)")
        return None
    if a.small and a.record_peers is None:
        runs = RECORDED / "runs.json"
        version = (
            (json.loads(runs.read_text()).get(name) or {}).get("versions", {}).get(name) if runs.exists() else None
        )
        if version is None:
            print(f"{name}: skipped (--small runs no peer, and benchmarks/recorded/{RECORDED.name}/ has no run of it)")
            return None
        print(
            f"{name}: replayed, not run: {TOOLS[name]} {version}'s output and the stub's truth log of that run, "
            f"at these settings (benchmarks/recorded/{RECORDED.name}/)"
        )
        return {"replay": RECORDED}
    exe, why = getattr(a, name) or None, ""
    if exe is None:
        exe, why = sc.peer_exe(name, Path(a.peer_dir), PINS[name])
    if exe is None:
        print(f"{name}: skipped ({why})")
        return None
    print(f"{name}: {exe}")
    if a.record_peers is not None:
        a.record_peers.mkdir(parents=True, exist_ok=True)
    return {"exe": exe, "tok": sc.tokenizer_dir(a.tokenizer), "record": a.record_peers}


def peer_run(name: str, how: dict[str, Any], stub_ms: list[float], settings: dict[str, Any], **kw: Any) -> Run:
    """The peer's run, live or replayed (:func:`peer`), at these settings (the stub's, and the ones
    a recorded run must have been made at: ``settings``)."""
    if "replay" in how:
        return replayed(name, stub_ms, settings, how["replay"])
    fn = run_guidellm if name == "guidellm" else run_aiperf
    return live(stub_ms, fn, peer=name, settings=settings, **settings, **kw, **how)


#: The client column's width: a replayed peer's name says so ("guidellm (recorded)").
NAME = 19


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", type=int, default=4, help="part A: users (closed loop)")
    ap.add_argument("--requests", type=int, default=160, help="part A: requests per client")
    ap.add_argument("--lines", type=int, default=300, help="part B: trace lines")
    ap.add_argument("--peers", default="guidellm,aiperf", help="peers to run (empty: none)")
    ap.add_argument("--peer-dir", default="/tmp/benchdb-peers", help="where each peer's venv is (or is made)")
    ap.add_argument("--guidellm", help="GuideLLM's executable (default: its venv under --peer-dir)")
    ap.add_argument("--aiperf", help="AIPerf's executable (default: its venv under --peer-dir)")
    ap.add_argument("--tokenizer", help="tokenizer folder for the peers' synthetic prompts")
    ap.add_argument(
        "--small", action="store_true", help="tiny sizes, no peer run (their recorded runs replayed): checks the script"
    )
    ap.add_argument(
        "--record-peers", type=Path, help="with --small: run the peers and keep each run here, for --small to replay"
    )
    ap.add_argument("--stub-host", nargs=3, type=float, help=argparse.SUPPRESS)
    ap.add_argument("--benchdb-run", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.stub_host:
        stub_host(*a.stub_host)
        return
    if a.benchdb_run:
        benchdb_run(json.loads(a.benchdb_run))
        return
    if a.record_peers is not None and not a.small:
        ap.error("--record-peers records at --small's settings, the only ones replayed: add --small")
    if a.small:
        a.concurrency, a.requests, a.lines = 2, 16, 40
    guidellm, aiperf = peer("guidellm", a), peer("aiperf", a)
    words, out, turns = (32, 4, 2) if a.small else (64, 16, 4)
    a.ttft, a.itl, a.prefill = (5.0, 1.0, 0.05) if a.small else (100.0, 5.0, 0.5)
    stub_ms = [a.ttft, a.itl, a.prefill]
    common = {"conc": a.concurrency, "n": a.requests}
    workload = f"multi-turn:turns={turns},input={words},output={out}"
    clients = [("benchdb", live(stub_ms, run_benchdb, **common, workload=workload))]
    if guidellm:
        data = f"kind=synthetic_text,prompt_tokens={TOKENS_PER_WORD * words},output_tokens={out},turns={turns}"
        name = "guidellm" + (" (recorded)" if "replay" in guidellm else "")
        clients.append((name, peer_run("guidellm", guidellm, stub_ms, {**common, "data": data})))
    part("multi-turn", a, clients)

    with tempfile.TemporaryDirectory() as tmp:
        # 64-token blocks in --small too: AIPerf makes a block's text in tokens, about 4 a stub word,
        # and shorter blocks share prefixes shorter than the stub's 16-word cache block: none would hit
        trace, block = Path(tmp) / "trace.jsonl", 64
        make_trace(trace, a.lines, 10.0 if a.small else 20.0, block, (2, 4) if a.small else (8, 32))
        a.ttft, a.itl, a.prefill = (5.0, 1.0, 0.02) if a.small else (100.0, 2.0, 0.2)
        stub_ms = [a.ttft, a.itl, a.prefill]
        wl = f"trace:file={trace},block={block}"
        clients = [("benchdb", live(stub_ms, run_benchdb, workload=wl, conc=0, n=a.lines))]
        if aiperf:
            name = "aiperf" + (" (recorded)" if "replay" in aiperf else "")
            clients.append((name, peer_run("aiperf", aiperf, stub_ms, {"lines": a.lines, "block": block}, trace=trace)))
        part("trace", a, clients)
    print(
        "\nmatched: each record takes a stub request of the same (prompt, cached) words from the stub's "
        "log; bad: errors + records with none. ok: TTFT and ITL within 2 %, trace lag p99 <= 1 ms"
    )


if __name__ == "__main__":
    main()
