"""A client worker process's side (``python -m benchdb.backends.openai.client_worker``): its share of
a load point run by the load generator's event loop, driven over stdin/stdout in JSON lines; and that
wire format, which the coordinator (:mod:`benchdb.backends.openai.workers`) speaks too."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import time
from typing import Any

from benchdb.backends.openai.loadgen import Generator, LoadResult, LoadSpec, run_async
from benchdb.harness.timing import StopRule
from benchdb.schema.serving_metrics import RequestRecord

#: Seconds between a worker's batches of samples (the shared stopping rule's latency).
FLUSH_S = 0.1


# -- the wire format ---------------------------------------------------------------------------
def spec_to_json(spec: LoadSpec) -> dict[str, Any]:
    return dataclasses.asdict(spec)


def spec_from_json(doc: dict[str, Any]) -> LoadSpec:
    return LoadSpec(**{**doc, "rule": StopRule(**doc["rule"])})


#: A request record's fields on the wire, in order (its chunks flattened: [t0, k0, t1, k1, ...]).
_WIRE = (
    "index",
    "sent",
    "first_byte",
    "chunks",
    "end",
    "input_tokens",
    "output_tokens",
    "error",
    "warmup",
    "first_token",
    "session",
    "turn",
    "cached_tokens",
    "shared_words",
    "prompt_words",
    "scheduled",
    "client_tokens",
)


def record_to_json(r: RequestRecord) -> list[Any]:
    return [[x for c in r.chunks for x in c] if f == "chunks" else getattr(r, f) for f in _WIRE]


def record_from_json(a: list[Any]) -> RequestRecord:
    fields = dict(zip(_WIRE, a, strict=True))
    flat = fields["chunks"]
    fields["chunks"] = list(zip(flat[::2], flat[1::2], strict=True))
    return RequestRecord(**fields)


# -- the worker side ---------------------------------------------------------------------------
def _send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class _Link:
    """A worker's side of :class:`benchdb.backends.openai.loadgen.Shared`: the window opens at the
    coordinator's ``go``, samples go back in batches, ``stop`` (or a closed stdin) ends the issuing."""

    def __init__(self) -> None:
        self.ttft: list[float] = []
        self.itl: list[float] = []
        self.gen: Generator | None = None
        self.go: asyncio.Future[float] | None = None
        self.reader: asyncio.StreamReader | None = None
        self.tasks: list[asyncio.Task[None]] = []

    async def open_window(self, gen: Generator) -> float:
        loop = asyncio.get_running_loop()
        self.gen = gen
        self.go = loop.create_future()
        reader = self.reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        self.tasks = [loop.create_task(self.listen()), loop.create_task(self.flush())]
        _send({"ready": True})
        start = await self.go
        await asyncio.sleep(max(0.0, start - time.perf_counter()))
        return start

    def sample(self, ttft: float, itl: list[float]) -> None:
        self.ttft.append(ttft)
        self.itl.extend(itl)

    def stop(self, reason: str) -> None:
        if self.gen is not None and not self.gen.stop_reason:
            self.gen.stop_reason = reason

    async def listen(self) -> None:
        assert self.reader is not None and self.go is not None
        while True:
            line = await self.reader.readline()
            if not line:  # the coordinator is gone: stop issuing, finish, exit
                self.stop("stopped")
                if not self.go.done():
                    self.go.set_result(time.perf_counter())
                return
            msg = json.loads(line)
            if "go" in msg and not self.go.done():
                self.go.set_result(float(msg["go"]))
            if "stop" in msg:
                self.stop(str(msg["stop"]))

    async def flush(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_S)
            self.send_samples()

    def send_samples(self) -> None:
        if self.ttft:
            _send({"s": self.ttft, "i": self.itl})
            self.ttft, self.itl = [], []

    def close(self) -> None:
        for t in self.tasks:
            t.cancel()
        self.send_samples()


async def _work(spec: LoadSpec, offset: float) -> LoadResult:
    link = _Link()
    try:
        return await run_async(spec, shared=link, first_offset=offset)
    finally:
        link.close()


def worker_main() -> None:
    """``python -m benchdb.backends.openai.client_worker``: one worker, driven over stdin/stdout."""
    msg = json.loads(sys.stdin.readline())
    if msg.get("cores"):
        os.sched_setaffinity(0, msg["cores"])
    spec = spec_from_json(msg["spec"])
    res = asyncio.run(_work(spec, msg.get("offset", 0.0)))
    _send(
        {
            "result": {
                "records": [record_to_json(r) for r in res.records],
                "window_start": res.window_start,
                "window_end": res.window_end,
                "stop_reason": res.stop_reason,
                "cpu_pct": res.client_cpu_pct,
                "loop_cpu_pct": res.loop_cpu_pct,
            }
        }
    )


if __name__ == "__main__":
    worker_main()
