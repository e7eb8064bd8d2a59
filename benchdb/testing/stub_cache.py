"""The stub's prefix cache and load shapes (:mod:`benchdb.testing.stub`): a known truth for what a
served prefix is worth, and for when a server warms up, settles, drifts or shifts, so that multi-turn,
shared-prefix and steady-state measurements can be checked against it.

A prompt is its words (the stub's tokens). The cache holds whole blocks of ``block`` words, each
keyed by every word from the sequence's start to the block's end (so a block is only a hit where
the whole prefix before it matches, as in vLLM's and SGLang's caches). After each request the cache
holds the blocks of its prompt followed by its reply, as a server that keeps a finished sequence's
KV does. The truth of a request is its TTFT: the stub's base TTFT plus ``prefill_ms`` for each word
not served from the cache; every request's truth is logged for the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Truth:
    """What the stub did for one request: its prompt's words, those served from the cache, and the
    TTFT it aimed at (seconds)."""

    prompt_words: int
    cached_words: int
    ttft_s: float


@dataclass
class PrefixCache:
    block: int = 16
    keys: set[tuple[str, ...]] = field(default_factory=set)
    log: list[Truth] = field(default_factory=list)

    def cached(self, words: list[str]) -> int:
        """Words at the start of ``words`` in whole cached blocks."""
        n = 0
        while n + self.block <= len(words) and tuple(words[: n + self.block]) in self.keys:
            n += self.block
        return n

    def keep(self, words: list[str]) -> None:
        for end in range(self.block, len(words) + 1, self.block):
            self.keys.add(tuple(words[:end]))


def itl_factor(shape: str, n: int) -> float:
    """How much slower than its ``itl_ms`` the stub streams its ``n``-th request (1-based) under
    ``shape``: ``""`` (never), ``warmup:K:F`` (the first K requests F times slower), ``drain:K:F``
    (requests after the K-th F times slower), ``drift:D`` (each request D times slower than the
    first, cumulatively: 1 + D * n), ``shift:K:F`` (from request K on, F times slower)."""
    if not shape:
        return 1.0
    kind, *args = shape.split(":")
    if kind == "drift":
        return 1.0 + float(args[0]) * n
    k, f = int(args[0]), float(args[1])
    if kind == "warmup":
        return f if n <= k else 1.0
    return f if n > k else 1.0  # drain and shift: the same shape, told apart by where K falls
