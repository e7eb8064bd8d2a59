"""One streamed request to an OpenAI-compatible endpoint, timed from when it leaves, and the
single-connection httpx clients requests run on (one per request in flight; see
:mod:`benchdb.backends.openai.loadgen` for why). What a reply means (its status, its stream, a
failure's words) is decided here for both send paths: httpx's and a replayed trace's
(:mod:`benchdb.backends.openai.raw_send`)."""

from __future__ import annotations

import asyncio
import importlib
import time
from typing import TYPE_CHECKING, Any

from benchdb.errors import BenchdbError, clip, first_line
from benchdb.schema.serving_metrics import RequestRecord, StreamParser

if TYPE_CHECKING:
    import httpx


#: httpcore trace events that mark a request leaving (the first one seen is its send time).
_SEND_EVENTS = frozenset({"connection.connect_tcp.started", "http11.send_request_headers.started"})


#: Bytes of a non-200 body kept for the error message.
ERROR_BODY_BYTES = 2048


#: Prompt tokens a request may count beyond one per byte of its body: a chat template's own text.
#: A server's usage above that is not believed (no tokenizer makes more tokens than bytes).
TEMPLATE_TOKENS = 4096


def refused(status: int, body: bytes) -> str:
    """The error of a reply with another status than 200: the status and its body's first bytes."""
    return clip(f"HTTP {status}: {bytes(body[:ERROR_BODY_BYTES]).decode(errors='replace').strip()}")


def stream_parser(rec: RequestRecord, chat: bool, max_tokens: int | None, body_bytes: int) -> StreamParser:
    """The parser of a 200 reply's stream into ``rec``: the server's usage is checked against
    ``max_tokens`` (the most the request asked for) and the request body's size."""
    return StreamParser(rec, chat, max_tokens, body_bytes + TEMPLATE_TOKENS)


def failure(e: BaseException, timeout_s: float) -> str:
    """A request's error where it raised ``e``: its timeout, else the exception's type and first line."""
    if isinstance(e, (TimeoutError, asyncio.TimeoutError)):
        return f"timeout after {timeout_s:g} s"
    return clip(f"{type(e).__name__}: {first_line(e)}")


async def stream_request(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    rec: RequestRecord,
    chat: bool,
    max_tokens: int | None = None,
) -> None:
    """One streamed request into ``rec``; the server's usage is checked against ``max_tokens``
    (the most the request asked for) and the body's size.

    ``rec.sent`` is when the request leaves: the start of its TCP connect on a new connection, else
    of writing its headers (httpx's trace hook), so the client's own request building (a few
    hundred microseconds of Python, more on a loaded client) is not counted as server time."""
    rec.sent = time.perf_counter()
    sent = False

    async def trace(name: str, info: dict[str, Any]) -> None:
        nonlocal sent
        if not sent and name in _SEND_EVENTS:
            rec.sent = time.perf_counter()
            sent = True

    async with client.stream("POST", url, content=body, headers=headers, extensions={"trace": trace}) as resp:
        rec.first_byte = time.perf_counter()
        if resp.status_code != 200:
            # Read at most the first piece and close the response before its end: httpx then
            # closes the connection instead of returning it to the pool.
            text = b""
            async for piece in resp.aiter_raw():
                text = piece
                break
            rec.error = refused(resp.status_code, text)
            return
        sse = stream_parser(rec, chat, max_tokens, len(body))
        async for piece in resp.aiter_bytes():
            if not sse.feed(piece, time.perf_counter()):
                return  # closed before its end: the connection is not reused
        sse.close(time.perf_counter())


class Clients:
    """Single-connection httpx clients, one per request in flight: a free list is O(1) where
    httpcore's pool is O(connections) per event (module doc). Closed loop: at most ``concurrency``
    exist; open loop: as many as requests overlap."""

    def __init__(self, timeout_s: float):
        try:
            import httpx
        except ImportError as e:
            raise BenchdbError("serving benchmarks need httpx: pip install 'benchdb[serving]'") from e
        self.httpx = httpx
        # what httpx imports at a client's first request (httpcore, h11, anyio's asyncio backend:
        # 71 modules, 44-54 ms here, ten times that on a busy machine), imported now, before anything
        # is timed: else the first request of a window without warm-up carried it in its TTFT, and an
        # open loop's arrivals queued behind it went out in one burst
        for name in ("httpcore", "h11", "anyio._backends._asyncio"):
            importlib.import_module(name)
        self.timeout_s = timeout_s
        self.ssl = httpx.create_ssl_context()  # once: building one per client costs ~20 ms
        self.free: list[httpx.AsyncClient] = []
        self.every: list[httpx.AsyncClient] = []
        #: A replayed trace's connections (:class:`benchdb.backends.openai.raw_send.Sender`), made
        #: at its first use and closed with these clients.
        self.raw: Any = None

    def take(self) -> httpx.AsyncClient:
        if self.free:
            return self.free.pop()
        hx = self.httpx
        client = hx.AsyncClient(
            limits=hx.Limits(max_connections=1, max_keepalive_connections=1),
            timeout=hx.Timeout(self.timeout_s),
            http1=True,
            http2=False,
            verify=self.ssl,
        )
        self.every.append(client)
        return client

    def give(self, client: httpx.AsyncClient) -> None:
        self.free.append(client)

    async def aclose(self) -> None:
        if self.raw is not None:
            await self.raw.aclose()
        await asyncio.gather(*(c.aclose() for c in self.every), return_exceptions=True)
