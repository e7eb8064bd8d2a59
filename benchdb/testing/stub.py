"""A tiny OpenAI-compatible streaming server with a known timeline, for the client's own benchmark
and the load generator's tests.

Why: a load generator is only trustworthy once it has measured a server whose true TTFT and ITL are
known. The stub streams ``max_tokens`` tokens, the first ``ttft_ms`` after the request arrives and
then one every ``itl_ms``, each scheduled against its deadline from the request's arrival (so
delays never accumulate), and ends with a usage chunk, as ``transformers serve`` does. Faults on
demand: every k-th request answered HTTP 500, or broken mid-stream by an error event (HTTP 200,
``data: {"error": ...}``, close), as real servers fail; and hostile answers, to show the client
trusts nothing: a usage whose ``completion_tokens`` is any JSON text (``1e23``, ``Infinity``,
``-1000``, ``"x"``), or a token event of several MiB on one line.

Timer precision: asyncio's default loop waits in epoll (whole milliseconds, rounded up: timers 0.56
ms late at the median here); the stub's waits in ``select()`` (0.12 ms), each sleep aimed ``EARLY_S``
early. ``select()`` watches descriptors below ``FD_SETSIZE`` (1024) only: the stub caps its open files
there, so a 1025th connection waits to be accepted instead of crashing the loop (seen with 1024
clients on a 16-core machine); ``--epoll`` lifts the cap, with epoll's millisecond timers.

Stdlib only: ``python -m benchdb.testing.stub --port 8000 --ttft-ms 20 --itl-ms 5``, or in-process
``with StubServer(StubConfig(...)) as stub: stub.url`` (a thread with its own event loop).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import selectors
import threading
import time
from dataclasses import dataclass
from typing import Any

from benchdb.testing.stub_cache import PrefixCache, Truth, itl_factor

#: How far ahead of a deadline a sleep aims (the median wake-up lateness of select(), module doc).
EARLY_S = 0.0001


@dataclass
class StubConfig:
    ttft_ms: float = 20.0
    itl_ms: float = 5.0
    model: str = "stub"
    #: Answer every k-th request (1-based, all endpoints that generate) with HTTP 500; 0: never.
    fail_every: int = 0
    #: Break every k-th request after ``error_after`` tokens with an error event; 0: never.
    error_every: int = 0
    error_after: int = 1
    #: Chunked transfer encoding (keep-alive); False: close-delimited body (``Connection: close``).
    chunked: bool = True
    #: End the stream with ``data: [DONE]`` (transformers serve may just end it).
    done: bool = True
    #: Exit the whole process once this many generation requests were answered (a server that
    #: dies mid-sweep); 0: never.
    exit_after: int = 0
    #: Every k-th streamed request's usage says ``completion_tokens: <bad_usage>`` (raw JSON text,
    #: e.g. ``1e23``, ``Infinity``, ``-1000``, ``"x"``); 0: never.
    bad_usage_every: int = 0
    bad_usage: str = "1e23"
    #: Every k-th streamed request's first token is an event of this many bytes, one line sent in
    #: 64 KiB writes (a server that never ends its line, until it does); 0: never.
    long_line_every: int = 0
    long_line_bytes: int = 8 << 20
    #: Prefix cache (:mod:`benchdb.testing.stub_cache`): TTFT grows by this for each prompt word not
    #: served from the cache, whose blocks are ``cache_block`` words; 0: no cache, TTFT is ``ttft_ms``.
    prefill_ms: float = 0.0
    cache_block: int = 16
    #: A load shape (:func:`benchdb.testing.stub_cache.itl_factor`): warmup:K:F, drain:K:F, drift:D, shift:K:F.
    shape: str = ""
    #: Requests generated at once at most (a server's batch); the others queue for a slot. 0: no limit.
    slots: int = 0


class Stub:
    """The server's logic on the running event loop; counters are read by tests."""

    def __init__(self, config: StubConfig):
        self.config = config
        self.requests = 0  # generation requests received
        self.connections = 0  # TCP connections accepted (a client reusing connections keeps it low)
        #: The last request's target (path and query, as sent) and headers (names lower-cased).
        self.last_target = ""
        self.last_headers: dict[str, str] = {}
        self.cache = PrefixCache(config.cache_block)
        self.slots = asyncio.Semaphore(config.slots) if config.slots else None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                arrival = time.perf_counter()
                lines = head.decode("latin-1").split("\r\n")
                method, path = (lines[0].split(" ") + ["", ""])[:2]
                headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                self.last_target, self.last_headers = path, headers
                keep = await self.route(method, path.split("?")[0], body, writer, arrival)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def route(self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter, arrival: float) -> bool:
        """Answer one request; whether the connection stays open."""
        if method == "GET" and path == "/health":
            return await self.json(writer, 200, {"status": "ok"})
        if method == "GET" and path == "/v1/models":
            return await self.json(
                writer,
                200,
                {"object": "list", "data": [{"id": self.config.model, "object": "model", "owned_by": "benchdb-stub"}]},
            )
        if method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            try:
                req = json.loads(body or b"{}")
            except ValueError:
                return await self.json(writer, 400, {"error": {"message": "body is not JSON"}})
            self.requests += 1
            n = self.requests
            cfg = self.config
            if cfg.fail_every and n % cfg.fail_every == 0:
                return await self.json(writer, 500, {"error": {"message": f"stub: injected failure of request {n}"}})
            if cfg.exit_after and n > cfg.exit_after:
                writer.close()
                os._exit(9)  # dies as a crashed server does: no reply, no clean-up
            if self.slots is None:
                return await self.generate(req, path.endswith("chat/completions"), writer, arrival, n, _broken(cfg, n))
            async with self.slots:  # queued for a slot: its timeline starts when it has one
                args = (req, path.endswith("chat/completions"), writer, time.perf_counter(), n, _broken(cfg, n))
                return await self.generate(*args)
        return await self.json(writer, 404, {"error": {"message": f"no route {method} {path}"}})

    async def json(self, writer: asyncio.StreamWriter, status: int, obj: dict[str, Any]) -> bool:
        data = json.dumps(obj).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}[status]
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        return True

    async def generate(
        self, req: dict[str, Any], chat: bool, writer: asyncio.StreamWriter, arrival: float, n: int, broken: bool
    ) -> bool:
        cfg = self.config
        n_tokens = max(0, int(req.get("max_tokens") or req.get("max_completion_tokens") or 16))
        if chat:
            prompt = " ".join(str(m.get("content", "")) for m in req.get("messages") or [] if isinstance(m, dict))
        else:
            prompt = str(req.get("prompt", ""))
        words = prompt.split()
        usage: dict[str, Any] = {
            "prompt_tokens": len(words),
            "completion_tokens": n_tokens,
            "total_tokens": len(words) + n_tokens,
        }
        ttft = cfg.ttft_ms / 1e3
        if cfg.prefill_ms:
            cached = self.cache.cached(words)
            ttft += (len(words) - cached) * cfg.prefill_ms / 1e3
            self.cache.keep(words + [f"t{i}" for i in range(n_tokens)])
            self.cache.log.append(Truth(len(words), cached, ttft))
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        bad_usage = bool(cfg.bad_usage_every and n % cfg.bad_usage_every == 0)
        long_line = bool(cfg.long_line_every and n % cfg.long_line_every == 0)
        base = {
            "id": f"stub-{n}",
            "object": "chat.completion.chunk" if chat else "text_completion",
            "created": int(time.time()),
            "model": cfg.model,
        }
        itl = cfg.itl_ms / 1e3 * itl_factor(cfg.shape, n)
        if not req.get("stream"):
            await _sleep_until(arrival + ttft + max(0, n_tokens - 1) * itl)
            text = "".join(f" t{i}" for i in range(n_tokens))
            answer = (
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
                if chat
                else {"index": 0, "text": text, "finish_reason": "length"}
            )
            return await self.json(writer, 200, {**base, "choices": [answer], "usage": usage})

        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            + (b"Transfer-Encoding: chunked\r\n\r\n" if cfg.chunked else b"Connection: close\r\n\r\n")
        )

        def event(obj: dict[str, Any] | str) -> None:
            data = b"data: " + (obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()) + b"\n\n"
            writer.write(b"%x\r\n%s\r\n" % (len(data), data) if cfg.chunked else data)

        def choice(text: str, finish: str | None) -> dict[str, Any]:
            if chat:
                return {"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}
            return {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}

        if chat:  # role-only first chunk, before any token: never a first token
            event({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
            await writer.drain()
        for i in range(n_tokens):
            if broken and i >= cfg.error_after:
                event({"error": f"stub: injected mid-stream error of request {n}"})
                await writer.drain()
                return False
            await _sleep_until(arrival + ttft + i * itl)
            if long_line and i == 0:
                text = "x" * cfg.long_line_bytes
                await self.long_event(writer, json.dumps({**base, "choices": [choice(text, None)]}))
                continue
            event({**base, "choices": [choice(f" t{i}", None)]})
            await writer.drain()
        last = json.dumps({**base, "choices": [choice("", "length")], "usage": usage})
        if bad_usage:  # spliced in as text: json.dumps cannot write every hostile value (a string of JSON)
            last = last.replace(f'"completion_tokens": {n_tokens}', f'"completion_tokens": {cfg.bad_usage}', 1)
        event(last)
        if cfg.done:
            event("[DONE]")
        if cfg.chunked:
            writer.write(b"0\r\n\r\n")
        await writer.drain()
        return cfg.chunked

    async def long_event(self, writer: asyncio.StreamWriter, text: str) -> None:
        """One event on one line of ``len(text)`` bytes, written 64 KiB at a time."""
        data = b"data: " + text.encode() + b"\n\n"
        step = 64 << 10
        for at in range(0, len(data), step):
            piece = data[at : at + step]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if self.config.chunked else piece)
            await writer.drain()


def _broken(cfg: StubConfig, n: int) -> bool:
    return bool(cfg.error_every and n % cfg.error_every == 0)


#: select()'s descriptor limit (Linux and macOS): a descriptor at or above it cannot be watched.
FD_SETSIZE = 1024


def new_loop(epoll: bool = False) -> asyncio.AbstractEventLoop:
    """An event loop whose timers have microsecond resolution (select(), see the module doc), or
    with ``epoll`` the default loop (any number of connections, millisecond timers)."""
    return asyncio.new_event_loop() if epoll else asyncio.SelectorEventLoop(selectors.SelectSelector())


def cap_open_files() -> None:
    """Keep this process's descriptors below select()'s limit: accept() then fails with EMFILE,
    which asyncio survives (it retries later), instead of select() failing the whole loop."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > FD_SETSIZE:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FD_SETSIZE, hard))


async def _sleep_until(deadline: float) -> None:
    """Sleep until ``deadline`` (``time.perf_counter``), aimed ``EARLY_S`` early (module doc)."""
    delay = deadline - time.perf_counter() - EARLY_S
    if delay > 0:
        await asyncio.sleep(delay)


class StubServer:
    """The stub in a background thread with its own event loop: ``start()`` returns the port."""

    def __init__(self, config: StubConfig | None = None, host: str = "127.0.0.1", port: int = 0):
        self.stub = Stub(config or StubConfig())
        self.host, self.port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> int:
        loop = new_loop()
        self._loop = loop
        self._server = loop.run_until_complete(asyncio.start_server(self.stub.handle, self.host, self.port))
        self.port = self._server.sockets[0].getsockname()[1]
        self._thread = threading.Thread(target=loop.run_forever, name="benchdb-stub", daemon=True)
        self._thread.start()
        return self.port

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None or self._thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(server), loop).result(timeout=5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(timeout=5)
            if not self._thread.is_alive():
                loop.close()
            self._loop = self._server = self._thread = None

    @staticmethod
    async def _shutdown(server: asyncio.Server) -> None:
        """Stop accepting, then cancel the streams still running (a client that timed out)."""
        server.close()
        me = asyncio.current_task()
        tasks = [t for t in asyncio.all_tasks() if t is not me]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def __enter__(self) -> StubServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def serve(config: StubConfig, host: str, port: int, reuse_port: bool = False) -> None:
    server = await asyncio.start_server(Stub(config).handle, host, port, reuse_port=reuse_port or None)
    print(f"benchdb stub listening on http://{host}:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchdb.testing.stub", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--ttft-ms", type=float, default=20.0)
    p.add_argument("--itl-ms", type=float, default=5.0)
    p.add_argument("--model", default="stub")
    p.add_argument("--fail-every", type=int, default=0, help="answer every k-th request with HTTP 500")
    p.add_argument("--error-every", type=int, default=0, help="break every k-th stream with an error event")
    p.add_argument("--close-delimited", action="store_true", help="no chunked encoding: close after each stream")
    p.add_argument("--no-done", action="store_true", help="end streams without data: [DONE]")
    p.add_argument("--exit-after-requests", type=int, default=0, metavar="N", help="exit at the request after the N-th")
    p.add_argument("--bad-usage-every", type=int, default=0, metavar="K", help="every k-th usage says --bad-usage")
    p.add_argument(
        "--bad-usage",
        default="1e23",
        metavar="JSON",
        help="the completion_tokens those usages carry, as JSON text (1e23, Infinity, -1000, '\"x\"')",
    )
    p.add_argument("--long-line-every", type=int, default=0, metavar="K", help="every k-th first token: one long line")
    p.add_argument("--long-line-mib", type=float, default=8.0, metavar="MIB")
    p.add_argument("--prefill-ms", type=float, default=0.0, help="TTFT added per prompt word not in its prefix cache")
    p.add_argument("--shape", default="", help="warmup:K:F, drain:K:F, drift:D or shift:K:F (stub_cache.itl_factor)")
    p.add_argument("--slots", type=int, default=0, help="requests generated at once at most; the others queue")
    p.add_argument(
        "--epoll",
        action="store_true",
        help="wait in epoll: more than 1024 connections, timers up to 1 ms late (module doc)",
    )
    p.add_argument(
        "--reuse-port",
        action="store_true",
        help="share --port with other stub processes (SO_REUSEPORT: the kernel spreads connections), "
        "so a client that outruns one process meets several",
    )
    a = p.parse_args(argv)
    cfg = StubConfig(
        ttft_ms=a.ttft_ms,
        itl_ms=a.itl_ms,
        model=a.model,
        fail_every=a.fail_every,
        error_every=a.error_every,
        chunked=not a.close_delimited,
        done=not a.no_done,
        exit_after=a.exit_after_requests,
        bad_usage_every=a.bad_usage_every,
        bad_usage=a.bad_usage,
        long_line_every=a.long_line_every,
        long_line_bytes=int(a.long_line_mib * (1 << 20)),
        prefill_ms=a.prefill_ms,
        shape=a.shape,
        slots=a.slots,
    )
    if not a.epoll:
        cap_open_files()
    try:
        loop = new_loop(a.epoll)
        loop.run_until_complete(serve(cfg, a.host, a.port, a.reuse_port))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
