"""How accurately does benchdb's load generator measure a server whose timeline is known?

Starts the stub server (benchdb.serving.stub, its own process: first token after --ttft-ms, then
one every --itl-ms) and measures it with benchdb's load generator, closed loop at each concurrency
(default 1, 16, 64, 256). Prints the measured TTFT and ITL (per token) medians against the stub's
settings (goal: within 2 % or 0.2 ms) and the client's CPU use (% of one core over the window: a
client near 100 % measures its own queueing, not the server).

With ``--guidellm PATH/bin/guidellm`` it also runs GuideLLM (its own venv; ``pip install
guidellm``) against the same stub at the same concurrencies and prints both tools side by side.
GuideLLM builds its synthetic prompts with a tokenizer: ``--tokenizer DIR`` (default: the tiny
tokenizer of benchdb.serving.tiny_llm, built offline into build/tiny-llm when missing).

    python benchmarks/serving_client.py [--ttft-ms 50 --itl-ms 10] [--guidellm build/guidellm-venv/bin/guidellm]
    python benchmarks/serving_client.py --small     # checks that the script works: seconds, no peer
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchdb.harness.timing import StopRule
from benchdb.serving import ITL_TOKEN, TTFT
from benchdb.serving.loadgen import LoadSpec, run
from benchdb.serving.metrics import summary

ROOT = Path(__file__).resolve().parent.parent


def start_stub(ttft_ms: float, itl_ms: float, epoll: bool = False) -> tuple[subprocess.Popen[str], str]:
    """The stub in its own process (so its CPU is not the client's), and its URL; ``epoll`` for
    more than 1024 connections (the stub's select() loop watches no more)."""
    proc = subprocess.Popen([sys.executable, "-m", "benchdb.serving.stub", "--port", "0",
                             "--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms), *(["--epoll"] if epoll else [])],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise SystemExit(f"the stub did not start: {line!r}")
    return proc, line.strip().split()[-1]


def benchdb_point(url: str, conc: int, max_tokens: int, min_time_s: float = 2.0) -> dict[str, Any]:
    rule = StopRule(warmup_iters=0, min_iters=max(50, 2 * conc), min_time_s=min_time_s, max_time_s=30.0,
                    max_iters=max(200, 4 * conc), target_ci=0.005)
    spec = LoadSpec(base_url=url, model="stub", prompts=["the quick brown fox jumps over the lazy dog"] * 4,
                    max_tokens=max_tokens, concurrency=conc, warmup_requests=conc, rule=rule,
                    request_timeout_s=60.0)
    res = run(spec)
    s = summary(res.records, res.window_s)
    return {"requests": s["requests"], "errors": s["errors"], "ttft": s[TTFT]["p50"], "itl": s[ITL_TOKEN]["p50"],
            "cpu": res.client_cpu_pct, "stop": res.stop_reason, "req_s": s["request_throughput"]}


def tokenizer_dir(path: str | None) -> Path:
    if path:
        return Path(path)
    out = ROOT / "build" / "tiny-llm"
    if not (out / "tokenizer.json").exists():
        subprocess.run([sys.executable, "-m", "benchdb.serving.tiny_llm", str(out)], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
    return out


def _median_ms(metric: Any) -> float | None:
    """GuideLLM's distribution summary of a metric -> its median in ms (streaming, successful)."""
    if not isinstance(metric, dict):
        return None
    d = metric.get("successful", metric)
    if isinstance(d, dict) and "median" in d:
        return float(d["median"])
    return None


def guidellm_point(exe: str, url: str, conc: int, max_tokens: int, tok: Path, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "guidellm.json"
        cmd = [exe, "run",
               "--backend", f"kind=openai_http,target={url},model=stub,request_format=/v1/completions,http2=false",
               "--profile", f"kind=concurrent,streams={conc}",
               "--data", f"kind=synthetic_text,prompt_tokens=16,output_tokens={max_tokens}",
               "--tokenizer", f"kind=huggingface_auto,model={tok}",
               "--constraint", f"kind=max_requests,count={n}",
               "--output", f"kind=json,path={out}", "--disable-console"]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        wall = time.perf_counter() - t
        if p.returncode != 0 or not out.exists():
            tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
            return {"error": " | ".join(tail)[:300]}
        doc = json.loads(out.read_text())
    metrics = (doc.get("benchmarks") or [{}])[-1].get("metrics") or {}
    return {"ttft": _median_ms(metrics.get("time_to_first_token_ms")),
            "itl": _median_ms(metrics.get("inter_token_latency_ms")),
            "requests": n, "wall": wall}


def fmt(v: float | None, target_ms: float) -> str:
    if v is None:
        return "      n/a            "
    err = v - target_ms
    ok = abs(err) <= max(0.02 * target_ms, 0.2)
    return f"{v:8.3f} ({err:+6.3f}{' ok' if ok else ' !!'})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ttft-ms", type=float, default=50.0)
    ap.add_argument("--itl-ms", type=float, default=10.0)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--concurrency", default="1,16,64,256")
    ap.add_argument("--guidellm", help="path to a guidellm executable (its own venv)")
    ap.add_argument("--tokenizer", help="tokenizer folder for GuideLLM's synthetic prompts")
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds of each load point at least")
    ap.add_argument("--small", action="store_true", help="concurrency 1 and 8, 5 ms TTFT, 1 ms ITL, 8 tokens, 0.5 s "
                                                         "a point, no peer: checks that the script works")
    a = ap.parse_args()
    if a.small:
        a.concurrency, a.ttft_ms, a.itl_ms, a.max_tokens, a.min_time = "1,8", 5.0, 1.0, 8, 0.5
    if a.small and a.guidellm:
        print("guidellm: skipped (--small runs no peer)")
        a.guidellm = None
    elif not a.guidellm:
        print("guidellm: skipped (give --guidellm PATH/bin/guidellm, from its own venv: pip install guidellm)")
    levels = [int(x) for x in a.concurrency.split(",")]
    proc, url = start_stub(a.ttft_ms, a.itl_ms, epoll=max(levels) > 1000)
    print(f"stub {url}: first token after {a.ttft_ms:g} ms, one token every {a.itl_ms:g} ms, "
          f"{a.max_tokens} tokens/request; {os.cpu_count()} CPUs")
    try:
        print(f"{'tool':8} {'conc':>5} {'reqs':>5} {'err':>4} {'TTFT median ms (vs set)':>24} "
              f"{'ITL median ms (vs set)':>24} {'client CPU':>10} {'tokens/s':>9}  stop")
        for conc in levels:
            r = benchdb_point(url, conc, a.max_tokens, a.min_time)
            ttft = r["ttft"] * 1e3 if r["ttft"] is not None else None
            itl = r["itl"] * 1e3 if r["itl"] is not None else None
            print(f"{'benchdb':8} {conc:5d} {r['requests']:5d} {r['errors']:4d} {fmt(ttft, a.ttft_ms):>24} "
                  f"{fmt(itl, a.itl_ms):>24} {r['cpu']:9.1f}% {r['req_s'] * a.max_tokens:9.0f}  {r['stop']}",
                  flush=True)
            if a.guidellm:
                g = guidellm_point(a.guidellm, url, conc, a.max_tokens, tokenizer_dir(a.tokenizer), r["requests"])
                if "error" in g:
                    print(f"{'guidellm':8} {conc:5d} failed: {g['error']}", flush=True)
                else:
                    print(f"{'guidellm':8} {conc:5d} {g['requests']:5d} {'':4} {fmt(g['ttft'], a.ttft_ms):>24} "
                          f"{fmt(g['itl'], a.itl_ms):>24} {'':>10}  ({g['wall']:.0f} s incl. start-up)", flush=True)
        print("ok: within 2 % or 0.2 ms of the stub's setting; !!: outside")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
