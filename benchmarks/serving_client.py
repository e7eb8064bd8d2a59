"""What does a serving client cost, and how accurately does it measure a server whose timeline is known?

Starts the stub server (benchdb.testing.stub, its own process: first token after --ttft-ms, then
one every --itl-ms, one token a chunk) and measures it, closed loop at each concurrency (default 1,
16, 64, 256), with benchdb's load generator and its peers GuideLLM and AIPerf, each in its own venv
under --peer-dir (installed there by this script with pip when missing). Every client runs as a
subprocess for a fixed number of requests, so all are measured alike:

- TTFT and ITL (per token) medians against the stub's settings (ok: within 2 %);
- the client's CPU: its whole process tree's (workers, services and their children included; the
  kernel's accounting of the waited-for tree, cross-checked by polling it), per streamed chunk. The
  figure is the slope between two runs at --cost-concurrency (N and 3N requests), so interpreter
  start-up, imports and tokenizer loading -- a fixed cost, printed apart -- do not count per chunk.

Then, per client: the highest concurrency whose TTFT and ITL medians are both within 2 %, and the
errors at the highest concurrency. ``--client-workers 1,2`` runs benchdb once per worker count.

    python benchmarks/serving_client.py [--ttft-ms 50 --itl-ms 10] [--peer-dir /tmp/benchdb-peers]
    python benchmarks/serving_client.py --small     # checks that the script works: seconds

--small runs no peer: installing GuideLLM (it pulls torch) takes longer than the whole check. Its
GuideLLM rows replay GuideLLM 0.8.1's own JSON reports, recorded against the stub at --small's
settings (benchmarks/recorded/serving_client/; `--small --record-guidellm DIR` records them anew with
the GuideLLM of --peer-dir), through the same reading and the same comparison as a live run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEERS = {"guidellm": "guidellm", "aiperf": "aiperf"}
PROMPT = "the quick brown fox jumps over the lazy dog"
#: GuideLLM's reports at --small's settings, replayed by --small (see the module's docstring).
RECORDED = Path(__file__).resolve().parent / "recorded" / "serving_client"


def start_stub(ttft_ms: float, itl_ms: float, epoll: bool = False) -> tuple[subprocess.Popen[str], str]:
    """The stub in its own process (so its CPU is not the client's), and its URL; ``epoll`` for
    more than 1024 connections (the stub's select() loop watches no more)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchdb.testing.stub",
            "--port",
            "0",
            "--ttft-ms",
            str(ttft_ms),
            "--itl-ms",
            str(itl_ms),
            *(["--epoll"] if epoll else []),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise SystemExit(f"the stub did not start: {line!r}")
    return proc, line.strip().split()[-1]


# -- one client run, its process tree's CPU measured --------------------------------------------
def run_tree(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 900) -> tuple[int, str, float]:
    """Run ``cmd``; (exit code, output tail, CPU seconds of its whole process tree). The kernel
    counts every descendant its parent waited for (RUSAGE_CHILDREN); a poll of the live tree catches
    any that were not, and the larger of the two is kept."""
    import psutil

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        seen: dict[tuple[int, float], float] = {}
        root = psutil.Process(proc.pid)
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                break
            try:
                for p in [root, *root.children(recursive=True)]:
                    t = p.cpu_times()
                    seen[(p.pid, p.create_time())] = t.user + t.system
            except psutil.Error:
                pass
            time.sleep(0.2)
        code = proc.wait()
        out.seek(0)
        tail = out.read().decode(errors="replace").strip().splitlines()[-4:]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, " | ".join(tail)[-400:], max(waited, sum(seen.values()))


def point_of_benchdb(a: argparse.Namespace) -> None:
    """This script's --benchdb-point mode: one fixed-count load point, its medians as JSON."""
    from benchdb.backends.openai import workers as pool
    from benchdb.backends.openai.loadgen import LoadSpec
    from benchdb.harness.timing import StopRule
    from benchdb.schema.serving import ITL_TOKEN, TTFT
    from benchdb.schema.serving_metrics import summary

    url, conc, n, tokens, workers = a.benchdb_point
    rule = StopRule(
        warmup_iters=0, min_iters=int(n), min_time_s=0.0, max_time_s=600.0, max_iters=int(n), target_ci=1e-9
    )
    spec = LoadSpec(
        base_url=url,
        model="stub",
        prompts=[PROMPT] * 4,
        max_tokens=int(tokens),
        concurrency=int(conc),
        warmup_requests=int(conc),
        rule=rule,
        request_timeout_s=120.0,
    )
    res = pool.run(spec, int(workers))
    s = summary(res.records, res.window_s)
    print(
        json.dumps(
            {
                "requests": s["requests"],
                "errors": s["errors"],
                "ttft": s[TTFT]["p50"],
                "itl": s[ITL_TOKEN]["p50"],
                "loop_cpu": res.loop_cpu_pct,
            }
        )
    )


def benchdb_point(url: str, conc: int, n: int, tokens: int, workers: int, **_: Any) -> dict[str, Any]:
    code, tail, cpu = run_tree(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--benchdb-point",
            url,
            str(conc),
            str(n),
            str(tokens),
            str(workers),
        ]
    )
    if code != 0:
        return {"error": tail, "cpu": cpu}
    r = json.loads(tail.rsplit("|", 1)[-1])
    return {
        "requests": r["requests"],
        "errors": r["errors"],
        "cpu": cpu,
        "ttft": r["ttft"] * 1e3 if r["ttft"] is not None else None,
        "itl": r["itl"] * 1e3 if r["itl"] is not None else None,
    }


def _median_ms(metric: Any) -> float | None:
    """GuideLLM's distribution summary of a metric -> its median in ms (successful requests)."""
    if not isinstance(metric, dict):
        return None
    d = metric.get("successful", metric)
    return float(d["median"]) if isinstance(d, dict) and "median" in d else None


def guidellm_point(
    url: str, conc: int, n: int, tokens: int, exe: str, tok: Path, record: Path | None = None, **_: Any
) -> dict[str, Any]:
    """GuideLLM run at one point, its JSON report read (:func:`guidellm_figures`); ``record``: a
    folder that keeps the report and the run's CPU (:func:`guidellm_replayed` reads them)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "guidellm.json"
        cmd = [
            exe,
            "run",
            "--backend",
            f"kind=openai_http,target={url},model=stub,request_format=/v1/completions,http2=false",
            "--profile",
            f"kind=concurrent,streams={conc}",
            "--data",
            f"kind=synthetic_text,prompt_tokens=16,output_tokens={tokens}",
            "--tokenizer",
            f"kind=huggingface_auto,model={tok}",
            "--constraint",
            f"kind=max_requests,count={n}",
            "--output",
            f"kind=json,path={out}",
            "--disable-console",
        ]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        code, tail, cpu = run_tree(cmd, env)
        if code != 0 or not out.exists():
            return {"error": tail, "cpu": cpu}
        doc = json.loads(out.read_text())
    if record is not None:
        _record(record, doc, conc, n, tokens, cpu)
    return guidellm_figures(doc, n, cpu)


def _point_name(conc: int, n: int, tokens: int) -> str:
    return f"guidellm_c{conc}_n{n}_t{tokens}.json.gz"


def _record(folder: Path, doc: dict[str, Any], conc: int, n: int, tokens: int, cpu: float) -> None:
    """The report as GuideLLM wrote it (gzip), its per-request records left out (the figures read
    here are its summary's), and the run's CPU seconds beside it in cpu.json."""
    folder.mkdir(parents=True, exist_ok=True)
    for bench in doc.get("benchmarks") or []:
        bench["requests"] = {k: [] for k in bench.get("requests") or {}}
    (folder / _point_name(conc, n, tokens)).write_bytes(gzip.compress(json.dumps(doc).encode(), mtime=0))
    cpu_file = folder / "cpu.json"
    cpus = json.loads(cpu_file.read_text()) if cpu_file.exists() else {}
    cpus[_point_name(conc, n, tokens)] = round(cpu, 3)
    cpu_file.write_text(json.dumps(cpus, indent=1, sort_keys=True) + "\n")


def guidellm_replayed(url: str, conc: int, n: int, tokens: int, folder: Path, **_: Any) -> dict[str, Any]:
    """A recorded GuideLLM report at this point (no GuideLLM run), read as a live one is."""
    path = folder / _point_name(conc, n, tokens)
    if not path.exists():
        return {"error": f"no recorded report {path.name}", "cpu": 0.0}
    cpu = json.loads((folder / "cpu.json").read_text())[path.name]
    return guidellm_figures(json.loads(gzip.decompress(path.read_bytes())), n, cpu)


def guidellm_figures(doc: dict[str, Any], n: int, cpu: float) -> dict[str, Any]:
    """GuideLLM's JSON report: benchmarks[-1].metrics.<name>.successful.median (ms)."""
    m = (doc.get("benchmarks") or [{}])[-1].get("metrics") or {}
    totals = m.get("request_totals") or {}
    ok, errored = totals.get("successful"), totals.get("errored")
    return {
        "ttft": _median_ms(m.get("time_to_first_token_ms")),
        "itl": _median_ms(m.get("inter_token_latency_ms")),
        "requests": int(ok) if isinstance(ok, (int, float)) else n,
        "errors": int(errored) if isinstance(errored, (int, float)) else 0,
        "cpu": cpu,
    }


def aiperf_point(url: str, conc: int, n: int, tokens: int, exe: str, tok: Path, **_: Any) -> dict[str, Any]:
    """AIPerf's profile_export_aiperf.json: <metric>.p50 in ms; output tokens from the server's
    usage (--use-server-token-count), as benchdb and GuideLLM count them, so ITL is per token."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            exe,
            "profile",
            "--model",
            "stub",
            "--url",
            url,
            "--endpoint-type",
            "completions",
            "--streaming",
            "--concurrency",
            str(conc),
            "--request-count",
            str(n),
            "--warmup-request-count",
            str(conc),
            "--prompt-input-tokens-mean",
            "16",
            "--prompt-output-tokens-mean",
            str(tokens),
            "--extra-inputs",
            f"max_tokens:{tokens}",
            "--use-server-token-count",
            "--tokenizer",
            str(tok),
            "--output-artifact-dir",
            tmp,
            "--ui",
            "none",
        ]
        # not HF_HUB_OFFLINE: AIPerf's offline mode reads only the hub cache, never a local folder
        code, tail, cpu = run_tree(cmd, {**os.environ, "HF_HUB_DISABLE_TELEMETRY": "1"})
        path = Path(tmp) / "profile_export_aiperf.json"
        if code != 0 or not path.exists():
            return {"error": tail, "cpu": cpu}
        doc = json.loads(path.read_text())

    def p50(name: str) -> float | None:
        v = doc.get(name)
        return float(v["p50"]) if isinstance(v, dict) and v.get("p50") is not None else None

    count = (doc.get("request_count") or {}).get("avg")
    errors = sum(int(e.get("count", 0)) for e in doc.get("error_summary") or [] if isinstance(e, dict))
    return {
        "ttft": p50("time_to_first_token"),
        "itl": p50("inter_token_latency"),
        "requests": int(count) if count is not None else 0,
        "errors": errors,
        "cpu": cpu,
    }


# -- peers' venvs ------------------------------------------------------------------------------
def peer_exe(name: str, folder: Path, pin: str = "") -> tuple[str | None, str]:
    """The peer's executable in folder/<name>-venv, installed there with pip when missing (``pin``:
    a version, e.g. "==0.8.1", for a script whose flags one release has)."""
    venv = folder / f"{name}-venv"
    exe = venv / "bin" / PEERS[name]
    if exe.exists():
        return str(exe), ""
    print(f"{name}: installing into {venv} (pip) ...", flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    for cmd in ([sys.executable, "-m", "venv", str(venv)], [str(venv / "bin" / "pip"), "install", "-q", name + pin]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return None, f"install failed: {(p.stderr or p.stdout).strip().splitlines()[-1:]}"
    return str(exe), ""


def tokenizer_dir(path: str | None) -> Path:
    if path:
        return Path(path)
    out = ROOT / "build" / "tiny-llm"
    if not (out / "tokenizer.json").exists():
        subprocess.run(
            [sys.executable, "-m", "benchdb.testing.tiny_llm", str(out)],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
    return out


# -- the table ---------------------------------------------------------------------------------
def within(v: float | None, target_ms: float) -> bool:
    return v is not None and abs(v - target_ms) <= 0.02 * target_ms


def fmt(v: float | None, target_ms: float) -> str:
    if v is None:
        return "      n/a            "
    err = v - target_ms
    return f"{v:8.3f} ({err:+6.3f}{' ok' if within(v, target_ms) else ' !!'})"


def requests_at(conc: int, small: bool) -> int:
    return max(16, 2 * conc) if small else max(40, 8 * conc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ttft-ms", type=float, default=50.0)
    ap.add_argument("--itl-ms", type=float, default=10.0)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--concurrency", default="1,16,64,256")
    ap.add_argument("--cost-concurrency", type=int, default=64, help="where CPU per chunk is measured")
    ap.add_argument("--client-workers", default="1", help="benchdb's worker processes, comma-separated runs")
    ap.add_argument("--peers", default="guidellm,aiperf", help="peers to run (empty: none)")
    ap.add_argument("--peer-dir", default="/tmp/benchdb-peers", help="where each peer's venv is (or is made)")
    ap.add_argument("--tokenizer", help="tokenizer folder for the peers' synthetic prompts")
    ap.add_argument(
        "--small",
        action="store_true",
        help="concurrency 1 and 8, 5 ms TTFT, 1 ms ITL, 8 tokens, few requests, no peer: checks that the script works",
    )
    ap.add_argument(
        "--record-guidellm",
        type=Path,
        help="with --small: run GuideLLM (from --peer-dir) and keep its reports here, for --small to replay",
    )
    ap.add_argument("--benchdb-point", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.benchdb_point:
        point_of_benchdb(a)
        return
    if a.small:
        a.concurrency, a.ttft_ms, a.itl_ms, a.max_tokens, a.cost_concurrency = "1,8", 5.0, 1.0, 8, 8
    levels = [int(x) for x in a.concurrency.split(",")]
    cost_at = max([c for c in levels if c <= a.cost_concurrency] or levels[:1])
    clients: list[tuple[str, Any, dict[str, Any]]] = [
        ("benchdb" if w == "1" else f"benchdb-w{w}", benchdb_point, {"workers": int(w)})
        for w in a.client_workers.split(",")
    ]
    wanted = [p.strip() for p in a.peers.split(",") if p.strip()]
    for name in PEERS:
        exe, why = None, "--small runs no peer" if a.small else "not in --peers"
        if name in wanted and (not a.small or (name == "guidellm" and a.record_guidellm)):
            exe, why = peer_exe(name, Path(a.peer_dir))
        if exe is None and name == "guidellm" and a.small:
            print(
                "guidellm: replayed, not run: GuideLLM 0.8.1's reports at these settings "
                f"(benchmarks/recorded/{RECORDED.name}/)"
            )
            clients.append((name, guidellm_replayed, {"folder": RECORDED}))
            continue
        if exe is None:
            print(f"{name}: skipped ({why})")
            continue
        clients.append(
            (
                name,
                guidellm_point if name == "guidellm" else aiperf_point,
                {"exe": exe, "tok": tokenizer_dir(a.tokenizer), "record": a.record_guidellm},
            )
        )
    proc, url = start_stub(a.ttft_ms, a.itl_ms, epoll=max(levels) > 1000)
    print(
        f"stub {url}: first token after {a.ttft_ms:g} ms, one token a chunk every {a.itl_ms:g} ms, "
        f"{a.max_tokens} tokens/request; {os.cpu_count()} CPUs",
        flush=True,
    )
    summary = []
    try:
        print(
            f"{'client':10} {'conc':>5} {'reqs':>5} {'err':>4} {'TTFT median ms (vs set)':>24} "
            f"{'ITL median ms (vs set)':>24} {'CPU s':>7}",
            flush=True,
        )
        for name, fn, kw in clients:
            got: dict[int, dict[str, Any]] = {}
            for conc in levels:
                n = requests_at(conc, a.small)
                r = fn(url, conc, n, a.max_tokens, **kw)
                got[conc] = r
                if "error" in r:
                    print(f"{name:10} {conc:5d} failed: {r['error']}", flush=True)
                    continue
                print(
                    f"{name:10} {conc:5d} {r['requests']:5d} {r['errors']:4d} {fmt(r['ttft'], a.ttft_ms):>24} "
                    f"{fmt(r['itl'], a.itl_ms):>24} {r['cpu']:7.2f}",
                    flush=True,
                )
            # CPU per chunk: the slope from N to 3N requests at one concurrency (start-up cancels out)
            n1 = requests_at(cost_at, a.small)
            big = fn(url, cost_at, 3 * n1, a.max_tokens, **kw)
            small = got[cost_at]
            per_chunk = fixed = None
            if "error" not in big and "error" not in small and big["requests"] > small["requests"]:
                chunks = (big["requests"] - small["requests"]) * a.max_tokens
                per_chunk = (big["cpu"] - small["cpu"]) / chunks
                fixed = small["cpu"] - per_chunk * small["requests"] * a.max_tokens
            good = 0
            for conc in levels:
                r = got[conc]
                if "error" in r or not (within(r["ttft"], a.ttft_ms) and within(r["itl"], a.itl_ms)):
                    break
                good = conc
            top = got[levels[-1]]
            summary.append((name, per_chunk, fixed, good, top))
        print()
        print(
            f"{'client':10} {'CPU us/chunk':>12} {'start-up CPU s':>14} {'within 2 % up to':>17} "
            f"{'TTFT err at ' + str(levels[-1]):>16} {'ITL err at ' + str(levels[-1]):>15}"
        )
        for name, per_chunk, fixed, good, top in summary:

            def err(v: float | None, target: float) -> str:
                return "n/a" if v is None else f"{100 * (v - target) / target:+.1f} %"

            print(
                f"{name:10} {'n/a' if per_chunk is None else f'{per_chunk * 1e6:.1f}':>12} "
                f"{'n/a' if fixed is None else f'{fixed:.2f}':>14} {good or 'none':>17} "
                f"{err(top.get('ttft'), a.ttft_ms):>16} {err(top.get('itl'), a.itl_ms):>15}"
            )
        print(
            f"CPU us/chunk: client process tree CPU per streamed chunk, slope from {requests_at(cost_at, a.small)} "
            f"to {3 * requests_at(cost_at, a.small)} requests at concurrency {cost_at}; ok: within 2 %"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
