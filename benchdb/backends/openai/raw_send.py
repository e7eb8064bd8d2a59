"""A replayed trace's send path: each request written to its connection at its time, with nothing
awaited before the write.

Why: through httpx (:func:`~benchdb.backends.openai.streams.stream_request`) a request leaves after
its client's set-up (the connection pool, its locks, h11, several event-loop yields, each of which
runs other streams' chunk callbacks): 1.8 ms at the median here but 6 ms at p99, a spread no lead
can make up. Here a line's connection is taken (an idle one, opened if none is) and its whole
request serialized with h11, httpx's own HTTP/1.1 engine, before its time (``READY_S`` at most);
at its time the bytes are written synchronously and that instant is its send time. The reply is
read from asyncio streams into h11 and parsed as on httpx's path (the same status, stream and
failure rules of :mod:`benchdb.backends.openai.streams`). Only trace replay sends this way: the
closed and open loops keep httpx, where a request's send time is taken when it leaves, whatever its
set-up. Against the stub (300 Poisson lines 20 ms apart, ~21 streams in flight) |send - its time|
was 0.03 ms at the median and 0.7 - 1.1 ms at p99 (httpx: 0.5 - 1 ms and 6 - 16 ms).

- Connections stay warm: the warm-up leaves ``WARM`` open, and once a line has its connection the
  idle ones are topped up to ``SPARE`` (where its time is ``TOP_UP_S`` away or more: not in its last
  wait). An idle connection the server closed (its keep-alive timeout) is dropped when taken:
  ``READY_S`` leaves time to open one.
- A connection whose reply ended cleanly is reused; one that answered another status than 200,
  broke mid-stream or timed out is closed, as on httpx's path.
- The request timeout counts from the send (a timer that cancels the reading task: no task or loop
  hop before the write); opening a connection has the same bound.
- The URL's userinfo is sent as basic auth, as httpx does; proxies the environment names are not
  used (httpx's would be): requests go straight to the server.
"""

from __future__ import annotations

import asyncio
import base64
import time
import urllib.parse
from typing import Any

import h11

from benchdb.backends.openai.streams import ERROR_BODY_BYTES, failure, refused, stream_parser
from benchdb.schema.serving_request import RequestRecord

#: The load generator's :class:`benchdb.backends.openai.loadgen.Generator` (named loosely, as in
#: :mod:`benchdb.backends.openai.sessions`: loadgen imports what imports this module).
Generator = Any

#: Connections the warm-up leaves idle, and the fewest kept idle (or opening) during the replay.
WARM, SPARE = 4, 2
#: How long before its time a line takes its connection and serializes its request.
READY_S = 0.25
#: Spare connections are opened only this long or longer before the next line's time: a loopback
#: connect's event-loop work is over well before that line's last wait.
TOP_UP_S = 0.005
#: Bytes asked of one read (a read returns what has arrived, up to this).
READ_BYTES = 1 << 16


class Connection:
    """One HTTP/1.1 connection: its streams, its h11 state, and the request waiting to be written."""

    __slots__ = ("reader", "writer", "h11", "out", "body_bytes")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(h11.CLIENT)
        self.out, self.body_bytes = b"", 0

    def alive(self) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing()


class Sender:
    """A trace's connections to one endpoint, and its requests' sends and replies."""

    def __init__(self, url: str, headers: dict[str, str], ssl: Any, timeout_s: float):
        parts = urllib.parse.urlsplit(url)
        https = parts.scheme.lower() == "https"
        self.host, self.port = parts.hostname or "", parts.port or (443 if https else 80)
        self.ssl = ssl if https else None
        #: Connections go to the address that answered the first one: no name lookup each.
        self.address = self.host
        self.timeout_s = timeout_s
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        userinfo, _, hostport = parts.netloc.rpartition("@")
        if parts.port == (443 if https else 80):
            hostport = hostport.rpartition(":")[0]
        head = {"host": hostport, "accept": "*/*", "user-agent": "benchdb"}
        head.update((k.lower(), v) for k, v in headers.items())
        if userinfo:
            user, _, password = userinfo.partition(":")
            token = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}".encode()
            head["authorization"] = "Basic " + base64.b64encode(token).decode("ascii")
        head.pop("content-length", None)
        self.head = list(head.items())
        self.idle: list[Connection] = []
        self.every: set[Connection] = set()
        self.opening = 0
        self.tasks: set[asyncio.Task[None]] = set()

    # -- connections ---------------------------------------------------------------------------
    async def connect(self) -> Connection:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(
                self.address, self.port, ssl=self.ssl, server_hostname=self.host if self.ssl else None
            ),
            self.timeout_s,
        )
        self.address = writer.get_extra_info("peername")[0]
        conn = Connection(reader, writer)
        self.every.add(conn)
        return conn

    def close(self, conn: Connection) -> None:
        conn.writer.close()
        self.every.discard(conn)

    async def take(self) -> Connection:
        """An idle connection the server has not closed, else a new one."""
        while self.idle:
            conn = self.idle.pop()
            if conn.alive():
                return conn
            self.close(conn)
        return await self.connect()

    async def warm(self) -> None:
        """Open connections until ``WARM`` are idle (the warm-up's): the first lines find them open."""
        opened = await asyncio.gather(*(self.connect() for _ in range(WARM - len(self.idle))), return_exceptions=True)
        self.idle.extend(c for c in opened if isinstance(c, Connection))

    def top_up(self) -> None:
        """Open connections in the background until ``SPARE`` are idle or on their way."""
        while len(self.idle) + self.opening < SPARE:
            self.opening += 1
            task = asyncio.get_running_loop().create_task(self._spare())
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _spare(self) -> None:
        try:
            self.idle.append(await self.connect())
        except Exception:  # noqa: S110 -- the line that finds none opens its own and reports why not
            pass
        finally:
            self.opening -= 1

    async def aclose(self) -> None:
        for task in self.tasks:
            task.cancel()
        closing = list(self.every)
        for conn in closing:
            self.close(conn)
        try:
            await asyncio.wait_for(
                asyncio.gather(*(c.writer.wait_closed() for c in closing), return_exceptions=True), 1.0
            )
        except asyncio.TimeoutError:
            pass  # a TLS peer that does not answer the close: the event loop's end drops the connection

    # -- requests ------------------------------------------------------------------------------
    async def ready(self, body: bytes) -> Connection | str:
        """The connection ``body`` will be sent on, its request serialized; the error where none opens."""
        try:
            conn = await self.take()
        except Exception as e:
            return failure(e, self.timeout_s)
        h = conn.h11
        request = h11.Request(
            method="POST", target=self.target, headers=[*self.head, ("content-length", str(len(body)))]
        )
        conn.out = b"".join(h.send(e) or b"" for e in (request, h11.Data(data=body), h11.EndOfMessage()))
        conn.body_bytes = len(body)
        return conn

    def drop(self, ready: Connection | str) -> None:
        """A readied request that is not sent: its connection is closed (h11 counts it as sent)."""
        if isinstance(ready, Connection):
            self.close(ready)

    def send(
        self, gen: Generator, rec: RequestRecord, ready: Connection | str, max_tokens: int | None
    ) -> asyncio.Task[None] | None:
        """Write the readied request now (its send time) and start reading its reply; a request
        whose connection did not open fails now."""
        rec.sent = time.perf_counter()
        if not isinstance(ready, Connection):
            rec.error = ready
            gen.ended(rec)
            return None
        ready.writer.write(ready.out)
        ready.out = b""
        return asyncio.get_running_loop().create_task(self.receive(gen, rec, ready, max_tokens or gen.max_tokens))

    async def now(self, gen: Generator, rec: RequestRecord, body: bytes, max_tokens: int | None) -> None:
        """Send one request at once and await its end (the warm-up's)."""
        task = self.send(gen, rec, await self.ready(body), max_tokens)
        if task is not None:
            await task

    async def receive(self, gen: Generator, rec: RequestRecord, conn: Connection, max_tokens: int | None) -> None:
        task = asyncio.current_task()
        assert task is not None
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            task.cancel()

        timer = asyncio.get_running_loop().call_later(self.timeout_s, expire)
        keep = False
        try:
            keep = await self.reply(conn, rec, gen.chat, max_tokens)
        except asyncio.CancelledError:
            if not expired:
                raise
            rec.error = failure(TimeoutError(), self.timeout_s)
        except Exception as e:  # a broken connection, a reply that is not HTTP/1.1
            rec.error = failure(e, self.timeout_s)
        finally:
            timer.cancel()
            if keep:
                conn.h11.start_next_cycle()
                self.idle.append(conn)
            else:
                self.close(conn)
        gen.ended(rec)

    async def reply(self, conn: Connection, rec: RequestRecord, chat: bool, max_tokens: int | None) -> bool:
        """Read the reply into ``rec``; whether the connection can carry another request."""
        h, reader = conn.h11, conn.reader
        sse = None
        status, error_body = 0, bytearray()
        t = time.perf_counter()
        while True:
            event = h.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(READ_BYTES)
                t = time.perf_counter()
                if not data and h.their_state is h11.SEND_RESPONSE:
                    raise h11.RemoteProtocolError("Server disconnected without sending a response.")
                h.receive_data(data)
            elif isinstance(event, h11.Data):
                if sse is None:
                    error_body += event.data
                    if len(error_body) >= ERROR_BODY_BYTES:
                        break
                elif not sse.feed(event.data, t):
                    return False  # an error event, or an event too long: the stream is not read to its end
            elif isinstance(event, h11.Response):
                rec.first_byte = t
                status = event.status_code
                if status == 200:
                    sse = stream_parser(rec, chat, max_tokens, conn.body_bytes)
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise h11.RemoteProtocolError("Server disconnected before the end of its reply.")
            elif event is h11.PAUSED:  # an Upgrade header among the user's, and a server that took it
                raise h11.RemoteProtocolError("Server switched protocols: a stream needs HTTP/1.1.")
        if sse is None:
            rec.error = refused(status, bytes(error_body))
            return False
        sse.close(t)
        return h.our_state is h11.DONE and h.their_state is h11.DONE


def sender(gen: Generator) -> Sender:
    """The generator's trace sender, made at its first use and closed with its clients."""
    clients = gen.clients
    if clients.raw is None:
        clients.raw = Sender(gen.url, gen.headers, clients.ssl, gen.spec.request_timeout_s)
    raw: Sender = clients.raw
    return raw
