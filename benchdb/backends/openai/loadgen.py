"""The load generator: streamed requests to an OpenAI-compatible endpoint, closed or open loop.

Why it is built this way:
- One clock (``time.perf_counter``) for sends, headers, chunk arrivals and ends, so every metric of
  :mod:`benchdb.schema.serving_metrics` is a difference on the same monotonic clock.
- Closed loop (``concurrency`` requests always in flight, a new one as each ends) measures latency
  at a load level; open loop (``rate`` requests/s with Poisson, constant or gamma arrivals, whatever
  the server's speed) measures what users see when arrivals do not wait for the server.
- Warm-up requests run first and all end before the window opens: the window holds steady state.
- Stopping reuses the timing loop's :class:`~benchdb.harness.timing.StopCheck` twice: once on TTFT,
  once on the per-token ITL. Issuing stops once ``min_iters`` requests and ``min_time_s`` are
  reached and both medians' 95 % CIs are within ``target_ci``, or at ``max_time_s`` /
  ``max_iters`` requests; in-flight requests then finish (each bounded by its timeout).
  The CI checks (benchdb's statistics SQL) run in a worker thread so they do not stall the event
  loop while chunks are being timed.
- httpx over HTTP/1.1 (a replayed trace: its own send path,
  :mod:`benchdb.backends.openai.raw_send`), one single-connection client per request in flight (a
  pool the size of the concurrency, kept by :class:`~benchdb.backends.openai.streams.Clients`):
  httpcore's own pool scans every connection on each request and response (O(n^2) per round), 80 %
  of the client's CPU at concurrency 128. A connection that answered a non-200 status is closed,
  never reused (its server may be in a bad state). Failed requests (status, error event, timeout,
  connection error) carry a one-line error and are never latency samples.
- One event loop saturates near one core; :mod:`benchdb.backends.openai.workers` shares a load point out
  over worker processes (``run(spec, workers=N)``), each running this loop on its share.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import random
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchdb.backends.openai.streams import Clients, failure, stream_request
from benchdb.backends.openai.urls import endpoint
from benchdb.errors import BenchdbError
from benchdb.harness.sample_stats import Stats
from benchdb.harness.timing import StopCheck, StopRule
from benchdb.schema.serving_metrics import RequestRecord, request_metrics

ENDPOINTS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
ARRIVALS = ("poisson", "constant", "gamma", "trace")


@dataclass
class LoadSpec:
    """One load point: where, what, how hard, and when to stop."""

    base_url: str
    model: str
    prompts: list[str]
    endpoint: str = "completions"
    max_tokens: int = 64
    #: Closed loop: requests in flight. Exactly one of ``concurrency`` and ``rate`` is set.
    concurrency: int | None = None
    #: Open loop: requests per second, arrivals drawn per ``arrival``.
    rate: float | None = None
    arrival: str = "poisson"
    #: Gamma shape of the inter-arrival times: 1.0 is Poisson, below is burstier, above steadier.
    burstiness: float = 1.0
    warmup_requests: int = 0
    #: min_iters: measured requests at least; max_iters: requests at most; the times and the CI
    #: target as in the timing loop (warm-up fields unused: see ``warmup_requests``).
    rule: StopRule = field(
        default_factory=lambda: StopRule(warmup_iters=0, min_iters=20, min_time_s=2.0, max_time_s=60.0, target_ci=0.02)
    )
    request_timeout_s: float = 60.0
    seed: int = 0
    #: Extra body fields (e.g. {"ignore_eos": True}), sent only when given: some servers reject them.
    extra_body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    #: A workload (:mod:`benchdb.backends.openai.workload`, as --workload gives it) instead of
    #: ``prompts``; its lengths default to ``seq_len`` and ``max_tokens``. A client worker sends
    #: conversations ``session_offset``, + ``session_stride``, ... (trace lines likewise).
    workload: str | None = None
    seq_len: int | None = None
    session_offset: int = 0
    session_stride: int = 1
    #: The model's tokenizer.json where the client has it: a workload's prompts are counted with it.
    tokenizer: str | None = None
    #: The load point's index in its sweep: a workload's conversations are numbered from it.
    point: int = 0

    def __post_init__(self) -> None:
        for bad, why in (
            (
                (self.concurrency is None) == (self.rate is None),
                "a load point needs exactly one of concurrency (closed loop) and rate (open loop)",
            ),
            (self.concurrency is not None and self.concurrency < 1, f"concurrency {self.concurrency}: must be >= 1"),
            (self.rate is not None and not self.rate > 0, f"rate {self.rate}: must be > 0 requests/s"),
            (self.endpoint not in ENDPOINTS, f"endpoint {self.endpoint!r}: expected one of {', '.join(ENDPOINTS)}"),
            (self.arrival not in ARRIVALS, f"arrival {self.arrival!r}: expected one of {', '.join(ARRIVALS)}"),
            (not self.burstiness > 0, f"burstiness {self.burstiness}: must be > 0"),
            (not self.prompts and not self.workload, "a load point needs at least one prompt"),
            ((self.arrival == "trace") != self._replays(), "a trace:SPEED load point replays a trace workload"),
            (
                self.max_tokens < 1 or self.warmup_requests < 0 or not self.request_timeout_s > 0,
                "max_tokens must be >= 1, warmup_requests >= 0 and request_timeout_s > 0",
            ),
        ):
            if bad:
                raise BenchdbError(why)

    def _replays(self) -> bool:
        from benchdb.backends.openai.workload import kind_of

        return kind_of(self.workload) == "trace"

    def bodies(self) -> list[bytes]:
        """The request bodies, one per prompt, serialized once (not per request: client CPU)."""
        return [self.body([{"role": "user", "content": p}], self.max_tokens) for p in self.prompts]

    def body(self, messages: list[dict[str, str]], max_tokens: int) -> bytes:
        """One request's body: the messages (chat), or their texts joined by spaces (completions)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.endpoint == "chat":
            body["messages"] = messages
        else:
            body["prompt"] = " ".join(m["content"] for m in messages)
        extra = self.extra_body
        if "min_tokens" in extra:  # ignore_eos: exactly the tokens this request asks for
            extra = {**extra, "min_tokens": max_tokens}
        return json.dumps({**body, **extra}).encode()


class Shared(Protocol):
    """A load point shared by several client processes (:mod:`benchdb.backends.openai.workers`): the
    coordinator opens every worker's window at one time and decides when all stop issuing."""

    async def open_window(self, gen: Generator) -> float:
        """Called after the warm-up; returns the window's start (a ``perf_counter`` reading), and
        may later set ``gen.stop_reason`` to stop the issuing."""
        ...

    def sample(self, ttft: float, itl: list[float]) -> None:
        """One measured request's TTFT and per-token ITLs, for the shared stopping rule."""
        ...


@dataclass
class LoadResult:
    records: list[RequestRecord]  # warm-up requests included, flagged
    window_start: float
    window_end: float
    stop_reason: str  # converged | max_time | max_iters
    client_cpu_pct: float | None  # this process's CPU over the window, % of one core
    errors: dict[str, int]  # measured failures by message
    #: the event loop's own thread over the window, % of one core: every request is timed on it, so
    #: near 100 % its timings include its own queueing (the process figure also counts the
    #: statistics checks' worker threads, and exceeds 100 % on a short window)
    loop_cpu_pct: float | None = None
    #: With client worker processes: per worker, its cores, requests, CPU and loop CPU (% of one core).
    workers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def window_s(self) -> float:
        return self.window_end - self.window_start

    @property
    def measured(self) -> list[RequestRecord]:
        return [r for r in self.records if not r.warmup]


class Generator:
    """Issues the requests of one load point and decides when to stop issuing."""

    def __init__(self, spec: LoadSpec, clients: Clients, stats: Stats | None):
        self.spec = spec
        self.clients = clients
        self.url = endpoint(spec.base_url, ENDPOINTS[spec.endpoint])  # the base URL's query after the path
        self.headers = {"Content-Type": "application/json", **spec.headers}
        from benchdb.backends.openai import workload
        from benchdb.backends.openai.sessions import token_counter

        self.workload = workload.parse(spec.workload, spec.seq_len, spec.max_tokens)
        self.bodies = spec.bodies() if self.workload is None else []
        #: A replayed trace is sent whole (up to the load point's limits): no stopping on convergence.
        self.replaying = self.workload is not None and self.workload.kind == "trace"
        #: text -> its tokens by the model's tokenizer (None without one): loaded once, before the window
        self.count = token_counter(spec.tokenizer if self.workload is not None else None)
        self.chat = spec.endpoint == "chat"
        asked = spec.extra_body.get("max_tokens", spec.max_tokens)
        self.max_tokens = asked if isinstance(asked, int) and not isinstance(asked, bool) else None
        self.records: list[RequestRecord] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.sent = 0  # requests issued, warm-up included (cycles the prompts)
        self.measured = 0  # measured requests issued
        self.warmup = True
        self.window_start = 0.0
        self.stop_reason = ""
        rule = spec.rule
        self.ttft: list[float] = []
        self.itl: list[float] = []
        per_token = dataclasses.replace(rule, max_iters=sys.maxsize)  # ITL: max_iters counts requests
        self.checks = [] if stats is None else [StopCheck(rule, stats), StopCheck(per_token, stats)]
        self.converged = [False, False]
        self.checking = False
        #: With worker processes: where measured requests' samples go (no own CI checks).
        self.shared: Shared | None = None
        #: Seconds before the first open-loop arrival (workers of one constant rate interleave).
        self.first_offset = 0.0

    # -- issuing -------------------------------------------------------------------------------
    def may_issue(self) -> bool:
        if self.warmup:
            return self.sent < self.spec.warmup_requests
        if not self.stop_reason:
            rule = self.spec.rule
            if time.perf_counter() - self.window_start >= rule.max_time_s:
                self.stop_reason = "max_time"
            elif self.measured >= rule.max_iters:
                self.stop_reason = "max_iters"
        return not self.stop_reason

    def new_record(self, body: bytes | None = None) -> tuple[RequestRecord, bytes]:
        """Count a request as issued (synchronously, so the limits hold however tasks interleave)."""
        rec = RequestRecord(index=self.measured if not self.warmup else self.sent, sent=0.0, warmup=self.warmup)
        body = body if body is not None else self.bodies[self.sent % len(self.bodies)]
        self.sent += 1
        if not self.warmup:
            self.measured += 1
        self.records.append(rec)
        return rec, body

    async def issue(self, rec: RequestRecord, body: bytes, max_tokens: int | None = None) -> None:
        """Send one request and await its end (bounded by the request timeout); ``max_tokens``: what
        this request asked for, where it is not the load point's."""
        client = self.clients.take()
        rec.sent = time.perf_counter()  # retaken by stream_request when the request leaves
        try:
            await asyncio.wait_for(
                stream_request(client, self.url, body, self.headers, rec, self.chat, max_tokens or self.max_tokens),
                self.spec.request_timeout_s,
            )
        except Exception as e:  # the timeout, httpx transport errors and the like: the request failed
            rec.error = failure(e, self.spec.request_timeout_s)
        self.clients.give(client)
        self.ended(rec)

    def ended(self, rec: RequestRecord) -> None:
        """A request's end, whichever path sent it: its end time, its tokens, its samples."""
        rec.end = time.perf_counter()
        if rec.ok and rec.output_tokens is None:
            rec.output_tokens = sum(k for _, k in rec.chunks)
        if not rec.warmup:
            self.completed(rec)

    # -- stopping ------------------------------------------------------------------------------
    def completed(self, rec: RequestRecord) -> None:
        m = request_metrics(rec)
        if self.shared is not None:
            if m is not None and m.ttft is not None:
                self.shared.sample(m.ttft, m.itl_token)
            return
        if m is not None and m.ttft is not None:
            self.ttft.append(m.ttft)
            self.itl.extend(m.itl_token)
        if self.stop_reason or self.checking or self.replaying:
            return
        elapsed = time.perf_counter() - self.window_start
        rule = self.spec.rule
        due = [len(s) >= c.next_check for s, c in zip((self.ttft, self.itl), self.checks, strict=True)]
        if elapsed >= rule.min_time_s and len(self.ttft) >= rule.min_iters and any(due):
            self.checking = True
            task = asyncio.get_running_loop().create_task(self.check(due, elapsed))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def check(self, due: list[bool], elapsed: float) -> None:
        """Re-evaluate the CIs that are due (in a thread); stop once both medians converged. With
        no ITL at all (one-token outputs) only TTFT has to converge."""
        samples = [list(self.ttft), list(self.itl)]
        try:
            for k in (0, 1):
                if due[k]:
                    reason = await asyncio.to_thread(self.checks[k], samples[k], elapsed)
                    self.converged[k] = reason == "converged"
            if self.converged[0] and (self.converged[1] or not self.itl) and not self.stop_reason:
                self.stop_reason = "converged"
        finally:
            self.checking = False

    # -- the two loops -------------------------------------------------------------------------
    def one_request(self) -> Coroutine[Any, Any, None]:
        """The next request, counted as issued now (the unit of a load point without a workload)."""
        return self.issue(*self.new_record())

    async def closed(self, concurrency: int, unit: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """``concurrency`` users, each running ``unit()`` (a request, or a conversation) after another."""

        async def worker() -> None:
            while self.may_issue():
                await unit()

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    async def open(self, rate: float, rng: random.Random, unit: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """``unit()`` started at ``rate`` a second, whatever the server does; ``unit`` is called at the
        arrival (so it counts as issued then) and runs as its own task."""
        spec = self.spec
        next_t = time.perf_counter() + self.first_offset
        running: set[asyncio.Task[None]] = set()
        while self.may_issue():
            delay = next_t - time.perf_counter()
            await asyncio.sleep(max(0.0, delay))  # 0: behind schedule, still let requests start
            if not self.may_issue():
                break
            task = asyncio.get_running_loop().create_task(unit())
            running.add(task)
            task.add_done_callback(running.discard)
            if spec.arrival == "constant":
                gap = 1.0 / rate
            else:
                shape = 1.0 if spec.arrival == "poisson" else spec.burstiness
                gap = rng.gammavariate(shape, 1.0 / (rate * shape))
            next_t += gap
        if running:
            await asyncio.gather(*running)

    async def phase(self, rng: random.Random) -> None:
        spec = self.spec
        if self.workload is not None:
            from benchdb.backends.openai import sessions

            await sessions.phase(self, self.workload, rng)
        elif spec.concurrency is not None:
            await self.closed(spec.concurrency, self.one_request)
        else:
            assert spec.rate is not None
            await self.open(spec.rate, rng, self.one_request)


async def run_async(
    spec: LoadSpec, stats: Stats | None = None, shared: Shared | None = None, first_offset: float = 0.0
) -> LoadResult:
    """Run one load point (warm-up, then the measured window) and return its records; with
    ``shared``, as one of several worker processes (its window opened and closed by the coordinator)."""
    clients = Clients(spec.request_timeout_s)
    own_stats = stats is None and shared is None
    if own_stats:
        stats = Stats()
    gen = Generator(spec, clients, stats)  # a worker (shared) checks no CI: no statistics engine
    gen.first_offset = first_offset
    try:
        rng = random.Random(spec.seed)
        if spec.warmup_requests or gen.replaying:
            await gen.phase(rng)
        gen.warmup = False
        # what exists now is never garbage: a full collection over it (tens of ms with a large heap)
        # would stall every request in flight mid-window
        gc.collect()
        gc.freeze()
        if shared is not None:
            gen.shared = shared
            gen.window_start = await shared.open_window(gen)
        else:
            gen.window_start = time.perf_counter()
        cpu0, loop0 = time.process_time(), time.thread_time()
        await gen.phase(rng)
        while gen.tasks:  # a CI check still running
            await asyncio.gather(*list(gen.tasks))
        window_end = time.perf_counter()
        cpu, loop_cpu = time.process_time() - cpu0, time.thread_time() - loop0
    finally:
        gc.unfreeze()
        await clients.aclose()
        if own_stats and stats is not None:
            stats.close()
    errors: dict[str, int] = {}
    for r in gen.records:
        if not r.warmup and r.error is not None:
            errors[r.error] = errors.get(r.error, 0) + 1
    wall = window_end - gen.window_start
    return LoadResult(
        records=gen.records,
        window_start=gen.window_start,
        window_end=window_end,
        stop_reason=gen.stop_reason or "max_iters",
        errors=errors,
        client_cpu_pct=100.0 * cpu / wall if wall > 0 else None,
        loop_cpu_pct=100.0 * loop_cpu / wall if wall > 0 else None,
    )


def run(spec: LoadSpec, stats: Stats | None = None) -> LoadResult:
    """:func:`run_async` on a fresh event loop, in this process (several client processes:
    :func:`benchdb.backends.openai.workers.run`)."""
    return asyncio.run(run_async(spec, stats))
