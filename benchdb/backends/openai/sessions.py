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
  sends two words, no trace line: a client's first request costs ~80 ms of set-up here, which would
  make the first lines late.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import statistics
import time
from typing import Any

from benchdb.backends.openai.workload import Turn, Workload

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
        if gen.warmup:  # a trace is replayed as it is: the warm-up sends a few words, no trace line
            for _ in range(max(1, spec.warmup_requests)):
                body = spec.body([{"role": "user", "content": "warm up"}], 1)
                await gen.issue(gen.new_record(body)[0], body, 1)
        else:
            await _replay(gen, workload, float(spec.rate or 1.0))
        return
    conv = Conversations(gen, workload)

    def conversation():
        return conv.run(conv.take())

    if spec.concurrency is not None:
        await gen.closed(spec.concurrency, conversation)
    else:
        assert spec.rate is not None
        await gen.open(spec.rate, rng, conversation)


async def _replay(gen: Generator, workload: Workload, speed: float) -> None:
    """Each of this worker's trace lines sent at its timestamp / ``speed`` after the window opened.
    A request's body is built before its time comes, and the wait ends ``SPIN_S`` early and yields
    until the time: the event loop's timers wake up to a millisecond late (epoll)."""
    spec = gen.spec
    conv = Conversations(gen, workload)
    start = gen.window_start
    running: set[asyncio.Task[None]] = set()
    #: The client's own time from issuing a request to its leaving (httpx builds it: ~1.5 ms here),
    #: the median of the last few: a request is issued that much before its time.
    lead: list[float] = []
    for number in range(spec.session_offset, len(workload.trace), max(1, spec.session_stride)):
        turn = workload.replayed(number)
        at = start + (turn.at_s or 0.0) / speed
        body = gen.spec.body([{"role": "user", "content": turn.text}], turn.max_tokens)
        words = turn.text.split()
        shared, tokens = conv.estimate.shared(words), conv.count(turn.text)  # before its time, not after
        conv.estimate.remember(words)
        await _until(at - (statistics.median(lead) if lead else 0.0))
        if not gen.may_issue():
            break
        rec, _ = gen.new_record(body)
        rec.scheduled = at
        rec.shared_words, rec.prompt_words, rec.client_tokens = shared, len(words), tokens
        task = asyncio.get_running_loop().create_task(_timed(gen, rec, body, turn.max_tokens, lead))
        running.add(task)
        task.add_done_callback(running.discard)
        await asyncio.sleep(0)  # the request starts now, not after the next line's wait
    if running:
        await asyncio.gather(*running)


async def _timed(gen: Generator, rec, body: bytes, max_tokens: int, lead: list[float]) -> None:
    issued = time.perf_counter()
    await gen.issue(rec, body, max_tokens)
    if rec.first_byte is not None:  # it left: its send time is its own
        lead.append(min(rec.sent - issued, 0.05))
        del lead[:-16]


#: How long before a replayed request's time the timer wait ends (then the loop yields until it).
SPIN_S = 0.0015


async def _until(at: float) -> None:
    """Return at ``at`` (``perf_counter``), letting other tasks run meanwhile."""
    if at - time.perf_counter() > SPIN_S:
        await asyncio.sleep(at - time.perf_counter() - SPIN_S)
    while time.perf_counter() < at:
        await asyncio.sleep(0)
