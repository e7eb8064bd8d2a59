"""One load point shared out over client worker processes, when one event loop cannot keep up.

Why it is built this way:
- One Python event loop saturates near one core (~17k streamed tokens/s on a fast core); past that
  its timings include its own queueing (the ``client_bound`` verdict). N worker processes, each on
  its own cores where the machine has enough (``os.sched_setaffinity``), each run today's event
  loop (:func:`benchdb.backends.openai.loadgen.run_async`) on a share of the load: the closed-loop
  concurrency, the open-loop rate, the warm-up and the request limit are divided among them.
- Workers are subprocesses (``python -m benchdb.backends.openai.client_worker``), not ``multiprocessing``
  children: the measuring child of a scenario is a daemon process, which may not start children.
  They speak JSON lines over stdin/stdout: the coordinator sends the spec; a worker warms up and
  says ``ready``; the coordinator sends one window start for all (``go``); workers stream each
  measured request's TTFT and ITLs back in small batches; the coordinator runs the stopping rule on
  the merged samples and sends ``stop``; each worker finishes its requests in flight and sends its
  records and CPU use.
- One clock: ``time.perf_counter`` is CLOCK_MONOTONIC on Linux, one clock for every process of the
  machine, so the workers' timelines merge without any offset (checked at import on other systems).
- A worker that exits early or goes silent past its deadline is an error naming it and its last
  stderr line; the other workers are killed; nothing waits without a bound.
"""

from __future__ import annotations

import dataclasses
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from typing import IO, Any

from benchdb.backends.openai import loadgen
from benchdb.backends.openai.client_worker import record_from_json, spec_to_json
from benchdb.backends.openai.loadgen import LoadResult, LoadSpec
from benchdb.errors import BenchdbError
from benchdb.harness.sample_stats import Stats
from benchdb.harness.timing import StopCheck
from benchdb.schema.serving_metrics import RequestRecord

#: Seconds a worker may take to start (interpreter, imports) beyond its warm-up's own bound.
START_S = 60.0
#: Seconds between ``go`` and the shared window start: every worker has read it by then.
GO_LEAD_S = 0.05


def same_clock() -> bool:
    """Whether ``perf_counter`` readings of two processes of this machine are on one clock."""
    impl = time.get_clock_info("perf_counter").implementation
    return "CLOCK_MONOTONIC" in impl and sys.platform.startswith("linux")


def resolve(value: str | int | None, load: LoadSpec | None = None) -> int:
    """``auto`` -> one worker per usable core (at most the concurrency); a number -> itself."""
    if value is None or value == "":
        return 1
    text = str(value).strip().lower()
    if text == "auto":
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    elif text.isdigit() and int(text) >= 1:
        n = int(text)
    else:
        raise BenchdbError(f"--client-workers {value!r}: give auto or a whole number >= 1")
    if load is not None and load.concurrency is not None:
        n = min(n, load.concurrency)
    return max(1, n)


def split(total: int, n: int) -> list[int]:
    """``total`` shared out over ``n`` as evenly as whole numbers allow (the first get the rest)."""
    return [total // n + (1 if i < total % n else 0) for i in range(n)]


def core_groups(n: int) -> list[list[int]] | None:
    """Disjoint groups of this process's usable cores, one per worker; None with fewer cores than
    workers (then the kernel places them)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < n:
        return None
    sizes = split(len(cores), n)
    out, at = [], 0
    for k in sizes:
        out.append(cores[at : at + k])
        at += k
    return out


def shares(spec: LoadSpec, n: int) -> list[tuple[LoadSpec, float]]:
    """Each worker's load spec and its first open-loop arrival offset."""
    rule = spec.rule
    conc = split(spec.concurrency, n) if spec.concurrency is not None else [None] * n
    warm = split(spec.warmup_requests, n)
    most = split(min(rule.max_iters, sys.maxsize // 2), n)
    out = []
    for i in range(n):
        k = i % len(spec.prompts) if spec.prompts else 0
        prompts = spec.prompts[k:] + spec.prompts[:k]
        sub = dataclasses.replace(
            spec,
            prompts=prompts,
            concurrency=conc[i],
            # a trace's rate is its replay speed, the same for every worker (each sends its lines)
            rate=spec.rate / n if spec.rate is not None and spec.arrival != "trace" else spec.rate,
            session_offset=i,
            session_stride=n,
            warmup_requests=warm[i],
            seed=spec.seed * 1009 + i,
            rule=dataclasses.replace(rule, min_iters=1, max_iters=max(1, most[i])),
        )
        offset = i / spec.rate if spec.rate is not None and spec.arrival == "constant" else 0.0
        out.append((sub, offset))
    return out


# -- the coordinator side ----------------------------------------------------------------------
class _Worker:
    def __init__(self, index: int, proc: subprocess.Popen[bytes], stderr: IO[bytes], cores: list[int] | None):
        self.index = index
        self.proc = proc
        self.stderr = stderr
        self.cores = cores
        self.buf = b""
        self.ready = False
        self.result: dict[str, Any] | None = None
        self.eof = False

    def tell(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died: its end of file says so

    def last_words(self) -> str:
        self.stderr.seek(0)
        lines = [ln for ln in self.stderr.read().decode(errors="replace").splitlines() if ln.strip()]
        return lines[-1].strip() if lines else "(no output)"


class _Pool:
    def __init__(self, spec: LoadSpec, n: int, stats: Stats):
        self.spec = spec
        self.stats = stats
        self.sel = selectors.DefaultSelector()
        self.workers: list[_Worker] = []
        groups = core_groups(n)
        for i, (sub, offset) in enumerate(shares(spec, n)):
            cores = groups[i] if groups else None
            err = tempfile.TemporaryFile()
            proc = subprocess.Popen(
                [sys.executable, "-m", "benchdb.backends.openai.client_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
            w = _Worker(i, proc, err, cores)
            assert proc.stdout is not None
            os.set_blocking(proc.stdout.fileno(), False)
            self.sel.register(proc.stdout, selectors.EVENT_READ, w)
            self.workers.append(w)
            w.tell({"spec": spec_to_json(sub), "offset": offset, "cores": cores})
        self.ttft: list[float] = []
        self.itl: list[float] = []
        self.cpu0 = 0.0

    def pump(self, until: float) -> None:
        """Read what the workers sent within 0.1 s; past ``until``, an error naming a silent worker."""
        left = until - time.perf_counter()
        if left <= 0:
            quiet = next((w for w in self.workers if w.result is None), self.workers[0])
            raise BenchdbError(
                f"client worker {quiet.index} (pid {quiet.proc.pid}) sent nothing in time "
                f"(last stderr: {quiet.last_words()}); lower the load or use fewer "
                "--client-workers"
            )
        for key, _ in self.sel.select(min(left, 0.1)):
            self.read(key.data)

    def read(self, w: _Worker) -> None:
        assert w.proc.stdout is not None
        try:
            data = os.read(w.proc.stdout.fileno(), 1 << 20)
        except BlockingIOError:
            return
        if not data:
            w.eof = True
            self.sel.unregister(w.proc.stdout)
            if w.result is None:
                code = w.proc.wait()
                raise BenchdbError(
                    f"client worker {w.index} (pid {w.proc.pid}) exited with code {code} before "
                    f"its results: {w.last_words()}"
                )
            return
        w.buf += data
        *lines, w.buf = w.buf.split(b"\n")
        for line in lines:
            msg = json.loads(line)
            if "s" in msg:
                self.ttft.extend(msg["s"])
                self.itl.extend(msg["i"])
            elif "ready" in msg:
                w.ready = True
            elif "result" in msg:
                w.result = msg["result"]

    def close(self) -> None:
        for w in self.workers:
            if w.proc.poll() is None:
                w.proc.kill()
            w.proc.wait()
            for f in (w.proc.stdin, w.proc.stdout, w.stderr):
                if f is not None:
                    f.close()
        self.sel.close()

    def measure(self) -> tuple[float, str]:
        """Warm-up, one shared window start, the shared stopping rule; returns (start, reason)."""
        spec, rule = self.spec, self.spec.rule
        warm_s = spec.request_timeout_s * (1 + spec.warmup_requests)
        until = time.perf_counter() + START_S + warm_s
        while not all(w.ready for w in self.workers):
            self.pump(until)
        start = time.perf_counter() + GO_LEAD_S
        self.cpu0 = time.process_time()
        for w in self.workers:
            w.tell({"go": start})
        checks = [StopCheck(rule, self.stats), StopCheck(dataclasses.replace(rule, max_iters=sys.maxsize), self.stats)]
        converged = [False, False]
        reason = ""
        until = start + rule.max_time_s + spec.request_timeout_s + START_S
        while not all(w.result is not None for w in self.workers):
            self.pump(until)
            elapsed = time.perf_counter() - start
            if reason or spec.arrival == "trace" or elapsed < rule.min_time_s or len(self.ttft) < rule.min_iters:
                continue
            for k, samples in enumerate((self.ttft, self.itl)):
                if len(samples) >= checks[k].next_check:
                    converged[k] = checks[k](samples, elapsed) == "converged"
            if converged[0] and (converged[1] or not self.itl):
                reason = "converged"
                for w in self.workers:
                    w.tell({"stop": reason})
        return start, reason


def run(spec: LoadSpec, n: int = 1, stats: Stats | None = None) -> LoadResult:
    """One load point over ``n`` client worker processes, their records merged into one timeline
    (one: in this process, :func:`benchdb.backends.openai.loadgen.run`)."""
    if n <= 1:
        return loadgen.run(spec, stats)
    if spec.concurrency is not None:
        n = min(n, spec.concurrency)
    if not same_clock():
        raise BenchdbError(
            "client worker processes need one system-wide monotonic clock (Linux); use --client-workers 1 here"
        )
    own = stats is None
    stats = stats or Stats()
    pool = _Pool(spec, n, stats)
    try:
        start, reason = pool.measure()
        cpu = time.process_time() - pool.cpu0
    finally:
        pool.close()
        if own:
            stats.close()
    records: list[RequestRecord] = []
    per: list[dict[str, Any]] = []
    end = start
    reasons = []
    for w in pool.workers:
        assert w.result is not None
        got = [record_from_json(a) for a in w.result["records"]]
        records.extend(got)
        end = max(end, w.result["window_end"])
        reasons.append(w.result["stop_reason"])
        per.append(
            {
                "cores": w.cores,
                "requests": sum(not r.warmup for r in got),
                "cpu_pct": w.result["cpu_pct"],
                "loop_cpu_pct": w.result["loop_cpu_pct"],
            }
        )
    records.sort(key=lambda r: (not r.warmup, r.sent))
    for i, r in enumerate(x for x in records if x.warmup):
        r.index = i
    for i, r in enumerate(x for x in records if not x.warmup):
        r.index = i
    wall = end - start
    errors: dict[str, int] = {}
    for r in records:
        if not r.warmup and r.error is not None:
            errors[r.error] = errors.get(r.error, 0) + 1
    # CPU: every worker's over its window plus the coordinator's; the loop figure is the busiest
    # worker's, as each worker's loop times its own requests (the client_bound verdict).
    total = sum(p["cpu_pct"] or 0.0 for p in per) + (100.0 * cpu / wall if wall > 0 else 0.0)
    loops = [p["loop_cpu_pct"] for p in per if p["loop_cpu_pct"] is not None]
    stop = reason or ("max_time" if "max_time" in reasons else "max_iters")
    return LoadResult(
        records=records,
        window_start=start,
        window_end=end,
        stop_reason=stop,
        errors=errors,
        client_cpu_pct=total if wall > 0 else None,
        loop_cpu_pct=max(loops) if loops else None,
        workers=per,
    )
