"""How the load generator (:mod:`benchdb.backends.openai.loadgen`) sends a workload
(:mod:`benchdb.backends.openai.workload`): conversations turn by turn, and replayed traces.

- Closed loop: ``concurrency`` users, each running one conversation after another; a user thinks
  between a reply and its next turn, so fewer requests than users may be in flight. Open loop:
  conversations (one-turn requests for the one-turn kinds) arrive at the rate, each then running
  on its own. A trace (load point ``trace:SPEED``) sends each line at its timestamp / SPEED from
  the window's start, whatever the server's speed.
- A turn sends the conversation so far: its shared prefix (a system message), every earlier user
  message and the reply exactly as it streamed back, then the new message. A failed turn ends its
  conversation (the next turn would send a history the user never saw). Once the load point stops
  issuing, conversations stop at their next turn.
- The client's estimate of what a prefix cache could serve: whole blocks of ``BLOCK_WORDS`` words
  that an earlier request sent or got back, counted from the prompt's start (the server's own
  ``cached_tokens`` is recorded beside it where it reports one).
- Warm-up conversations are numbered from ``WARMUP_BASE``: the measured ones are the same requests
  whether or not a warm-up ran. A trace's warm-up (at least one request, whatever --warmup says)
  sends two words, no trace line, on the trace's own send path
  (:mod:`benchdb.backends.openai.raw_send`), and leaves its connections open: a first request's
  set-up would make the first lines late.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import random
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from benchdb.backends.openai.workload import Turn, Workload

if TYPE_CHECKING:
    from benchdb.backends.openai.raw_send import Connection, Sender

#: The load generator's :class:`benchdb.backends.openai.loadgen.Generator` (which imports this
#: module: named loosely here so that the two do not import each other).
Generator = Any

#: Words in one block of the client's prefix estimate (vLLM's default KV block is 16 tokens).
BLOCK_WORDS = 16
#: The first warm-up conversation's number (within its load point's numbers).
WARMUP_BASE = 1 << 40
#: Conversation numbers of one load point: load point k's are k * POINT_STRIDE + 0, 1, 2, ...
POINT_STRIDE = 1 << 48


async def _think(gen, seconds: float) -> bool:
    """A user's think time, cut short when the load point stops issuing (its idle tail would stretch
    the window); whether the conversation goes on."""
    end = time.perf_counter() + seconds
    while gen.may_issue():
        left = end - time.perf_counter()
        if left <= 0:
            return True
        await asyncio.sleep(min(left, 0.05))
    return False


def block_hashes(words: list[str], block: int = BLOCK_WORDS) -> list[bytes]:
    """One hash per whole block of ``words``, each covering the words from the start to its end."""
    h = hashlib.blake2b(digest_size=16)
    out = []
    for end in range(block, len(words) + 1, block):
        h.update(" ".join(words[end - block : end]).encode() + b"\x00")
        out.append(h.copy().digest())
    return out


class PrefixEstimate:
    """The blocks earlier requests sent or got back: the client's view of the prefix structure."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()

    def shared(self, words: list[str]) -> int:
        n = 0
        for h in block_hashes(words):
            if h not in self.seen:
                break
            n += 1
        return n * BLOCK_WORDS

    def remember(self, words: list[str]) -> None:
        self.seen.update(block_hashes(words))


class Conversations:
    """Hands out conversation numbers (a worker's share: offset, offset + stride, ...) and runs them."""

    def __init__(self, gen: Generator, workload: Workload):
        self.gen, self.workload = gen, workload
        # each load point its own conversations: a later point never finds an earlier one's prompts
        # in the server's prefix cache
        base = gen.spec.point * POINT_STRIDE
        self.next = base + gen.spec.session_offset
        self.warm_next = base + WARMUP_BASE + gen.spec.session_offset
        self.stride = max(1, gen.spec.session_stride)
        self.estimate = PrefixEstimate()
        self.count = gen.count

    def take(self) -> int:
        if self.gen.warmup:
            self.warm_next += self.stride
            return self.warm_next - self.stride
        self.next += self.stride
        return self.next - self.stride

    async def run(self, number: int) -> None:
        gen = self.gen
        prefix, turns = self.workload.conversation(number)
        history = [{"role": "system", "content": prefix}] if prefix else []
        for t, turn in enumerate(turns):
            if t and turn.think_s and not await _think(gen, turn.think_s):
                return
            if not gen.may_issue():
                return
            messages = [*history, {"role": "user", "content": turn.text}]
            rec = await self.send(messages, turn, number if self.workload.sessions else None, t + 1)
            if not rec.ok:
                return
            history = [*messages, {"role": "assistant", "content": "".join(rec.reply or [])}]
            rec.reply = None  # kept in the history only
            self.estimate.remember(_text(history).split())

    async def send(self, messages: list[dict[str, str]], turn: Turn, session: int | None, number: int):
        gen = self.gen
        rec, body = gen.new_record(gen.spec.body(messages, turn.max_tokens))
        text = _text(messages)
        words = text.split()
        rec.session, rec.turn = session, number if session is not None else None
        rec.shared_words, rec.prompt_words = self.estimate.shared(words), len(words)
        rec.client_tokens = self.count(text)
        rec.reply = [] if self.workload.sessions else None
        await gen.issue(rec, body, turn.max_tokens)
        if not self.workload.sessions and rec.ok:
            self.estimate.remember(words)
        return rec


def token_counter(path: str | None):
    """text -> its tokens by the tokenizer at ``path`` (special tokens not added); None for every
    text where there is none or it cannot be read (the server's counts stand alone, marked so)."""
    from benchdb.backends.openai.prompts import load_tokenizer

    tok = load_tokenizer(path)
    if tok is None:
        return lambda text: None
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _text(messages: list[dict[str, str]]) -> str:
    """The messages' texts in order, joined by spaces: a completions prompt, and what a chat server's
    prompt holds without its template."""
    return " ".join(m["content"] for m in messages)


async def phase(gen: Generator, workload: Workload, rng: random.Random) -> None:
    """One phase (warm-up or the measured window) of a workload's load point."""
    spec = gen.spec
    if workload.kind == "trace":
        from benchdb.backends.openai.raw_send import sender  # h11: only a trace needs it

        send = sender(gen)
        if gen.warmup:  # a trace is replayed as it is: the warm-up sends a few words, no trace line
            for _ in range(max(1, spec.warmup_requests)):
                body = spec.body([{"role": "user", "content": "warm up"}], 1)
                await send.now(gen, gen.new_record(body)[0], body, 1)
            await send.warm()
        else:
            await _replay(gen, workload, float(spec.rate or 1.0), send)
        return
    conv = Conversations(gen, workload)

    def conversation():
        return conv.run(conv.take())

    if spec.concurrency is not None:
        await gen.closed(spec.concurrency, conversation)
    else:
        assert spec.rate is not None
        await gen.open(spec.rate, rng, conversation)


async def _replay(gen: Generator, workload: Workload, speed: float, send: Sender) -> None:
    """Each of this worker's trace lines sent at its timestamp / ``speed`` after the window opened,
    prepared before its time (:class:`_Lines`). The last wait ends ``SPIN_S`` early and yields until
    the time (the event loop's timers wake up to a millisecond late: epoll), then the request is
    written with nothing awaited first."""
    from benchdb.backends.openai.raw_send import TOP_UP_S

    lines = _Lines(gen, workload, speed, send)
    running: set[asyncio.Task[None]] = set()
    while (line := await lines.next()) is not None:
        if line.at - time.perf_counter() > TOP_UP_S:
            send.top_up()
        await _until(line.at)
        if not gen.may_issue():
            for unsent in lines.ahead:
                send.drop(unsent.ready)
            break
        lines.ahead.popleft()
        rec, _ = gen.new_record(line.body)
        rec.scheduled = line.at
        rec.shared_words, rec.prompt_words, rec.client_tokens = line.shared, line.words, line.tokens
        task = send.send(gen, rec, line.ready, line.max_tokens)
        if task is not None:
            running.add(task)
            task.add_done_callback(running.discard)
    if running:
        await asyncio.gather(*running)


class _Line(NamedTuple):
    """A trace line prepared to be sent: its time, body, readied connection and prefix figures."""

    at: float
    body: bytes
    ready: Connection | str
    shared: int
    words: int
    tokens: int | None
    max_tokens: int


class _Lines:
    """A worker's trace lines in order, each prepared (its body built, its connection taken, its
    request serialized) before its time, ``READY_S`` at most. The lines due up to ``AHEAD_S`` after
    the next to leave are prepared while it has time to spare: a line close behind another leaves
    at its time, not after its own preparation (0.3 - 0.8 ms here) following the other's send."""

    def __init__(self, gen: Generator, workload: Workload, speed: float, send: Sender):
        spec = gen.spec
        numbers = range(spec.session_offset, len(workload.trace), max(1, spec.session_stride))
        self.turns = (workload.replayed(n) for n in numbers)
        self.gen, self.send, self.speed = gen, send, speed
        self.conv = Conversations(gen, workload)
        self.ahead: collections.deque[_Line] = collections.deque()
        self.built: list[Turn | None] = []  # the next line's turn, once built ([None]: no more)

    async def next(self) -> _Line | None:
        """The next line to send (prepared, and its burst's next lines too); None after the last."""
        if not self.ahead:
            turn = self.upcoming()
            if turn is None:
                return None
            await self.prepare(turn)
        first = self.ahead[0]
        while first.at - time.perf_counter() > PREPARE_S and self.send.idle:
            turn = self.upcoming()
            if turn is None or self.at(turn) - first.at >= AHEAD_S:
                break
            await self.prepare(turn)
        return first

    def upcoming(self) -> Turn | None:
        if not self.built:
            self.built.append(next(self.turns, None))
        return self.built[0]

    def at(self, turn: Turn) -> float:
        return self.gen.window_start + (turn.at_s or 0.0) / self.speed

    async def prepare(self, turn: Turn) -> None:
        from benchdb.backends.openai.raw_send import READY_S

        self.built.clear()
        body = self.gen.spec.body([{"role": "user", "content": turn.text}], turn.max_tokens)
        words = turn.text.split()
        shared, tokens = self.conv.estimate.shared(words), self.conv.count(turn.text)
        self.conv.estimate.remember(words)
        at = self.at(turn)
        if at - READY_S > time.perf_counter():
            await asyncio.sleep(at - READY_S - time.perf_counter())
        self.ahead.append(_Line(at, body, await self.send.ready(body), shared, len(words), tokens, turn.max_tokens))


#: Lines due this soon after the next one to leave are prepared before it leaves (:class:`_Lines`).
AHEAD_S = 0.05
#: The time the next line to leave must have to spare for one more line to be prepared first.
PREPARE_S = 0.001
#: How long before a replayed request's time the timer wait ends (then the loop yields until it).
SPIN_S = 0.0015


async def _until(at: float) -> None:
    """Return at ``at`` (``perf_counter``), letting other tasks run meanwhile."""
    if at - time.perf_counter() > SPIN_S:
        await asyncio.sleep(at - time.perf_counter() - SPIN_S)
    while time.perf_counter() < at:
        await asyncio.sleep(0)
