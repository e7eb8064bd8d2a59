"""An independent streaming client for an OpenAI-compatible server: TTFT and inter-chunk gaps.

    python benchmarks/gpu/serving_independent.py URL MODEL --concurrency 8 --requests 64
        [--prompt-words 128] [--max-tokens 64] [--endpoint completions]

It shares no code with benchdb's load generator (no asyncio, no httpx): one thread per request in
flight, ``http.client`` and ``time.perf_counter``, a closed loop of ``--concurrency`` requests until
``--requests`` have completed. It prints one JSON line: the medians and p90 of TTFT and of the gap
between streamed chunks (the servers measured here stream one token a chunk), the completed
requests, and output chunks per second over the window. It is the second opinion that
benchmarks/gpu/serve.sh sets beside ``benchdb run --backend openai`` on the same server.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
from urllib.parse import urlsplit


def one_request(url: str, model: str, prompt: str, max_tokens: int, endpoint: str) -> tuple[float, list[float]]:
    """(TTFT, [gaps between chunks]) of one streamed request, in seconds."""
    parts = urlsplit(url)
    con = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    if endpoint == "chat":
        path = "/v1/chat/completions"
        body = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "stream": True,
        }
    else:
        path = "/v1/completions"
        body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "stream": True}
    t0 = time.perf_counter()
    con.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    resp = con.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    stamps = []
    first = None
    for raw in resp:
        line = raw.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            break
        event = json.loads(data)
        choice = (event.get("choices") or [{}])[0]
        text = choice.get("text") if endpoint != "chat" else (choice.get("delta") or {}).get("content")
        if text:
            stamps.append(time.perf_counter())
        elif first is None:
            first = data[:300]
    con.close()
    if not stamps:
        raise RuntimeError(f"no content chunk; the first event without content: {first!r}")
    return stamps[0] - t0, [b - a for a, b in zip(stamps, stamps[1:], strict=False)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("model")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--prompt-words", type=int, default=128)
    ap.add_argument("--prompts", help='a JSONL file of {"prompt": ...} (benchdb run --prompts), sent in turn')
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--endpoint", default="completions", choices=("completions", "chat"))
    args = ap.parse_args()
    if args.prompts:
        with open(args.prompts, encoding="utf-8") as f:
            prompts = [json.loads(line)["prompt"] for line in f if line.strip()]
    else:
        prompts = [" ".join(["the", "model", "serves", "a", "token"] * args.prompt_words)[: 6 * args.prompt_words]]
    lock = threading.Lock()
    ttfts: list[float] = []
    gaps: list[float] = []
    errors: list[str] = []
    issued = 0

    def worker() -> None:
        nonlocal issued
        while True:
            with lock:
                if issued >= args.requests:
                    return
                issued += 1
                prompt = prompts[issued % len(prompts)]
            try:
                ttft, g = one_request(args.url, args.model, prompt, args.max_tokens, args.endpoint)
            except Exception as exc:  # a failed request is counted, the loop goes on
                with lock:
                    errors.append(str(exc)[:200])
                continue
            with lock:
                ttfts.append(ttft)
                gaps.extend(g)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    window = time.perf_counter() - t0

    def q(values: list[float], p: float) -> float | None:
        if not values:
            return None
        return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] if len(values) > 1 else values[0]

    print(
        json.dumps(
            {
                "tool": "independent",
                "concurrency": args.concurrency,
                "completed": len(ttfts),
                "errors": len(errors),
                "first_error": errors[0] if errors else None,
                "ttft_p50_ms": (statistics.median(ttfts) * 1e3) if ttfts else None,
                "ttft_p90_ms": (q(ttfts, 90) or 0) * 1e3 if ttfts else None,
                "itl_p50_ms": (statistics.median(gaps) * 1e3) if gaps else None,
                "itl_p90_ms": (q(gaps, 90) or 0) * 1e3 if gaps else None,
                "chunks_per_s": (len(gaps) + len(ttfts)) / window,
                "window_s": window,
            }
        )
    )


if __name__ == "__main__":
    main()
