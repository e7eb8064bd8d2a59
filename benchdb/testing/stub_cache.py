"""The stub's prefix cache and load shapes (:mod:`benchdb.testing.stub`): a known truth for what a
served prefix is worth, and for when a server warms up, settles, drifts or shifts, so that multi-turn,
shared-prefix and steady-state measurements can be checked against it.

A prompt is its words (the stub's tokens). The cache holds whole blocks of ``block`` words, each
keyed by its words and the key of the block before it, a hash chain (so a block is only a hit where
the whole prefix before it matches, as in vLLM's and SGLang's caches, and a long conversation costs
memory in proportion to its length, not its square). After each request the cache
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
    keys: set[int] = field(default_factory=set)
    log: list[Truth] = field(default_factory=list)

    def _chain(self, words: list[str]):
        """Each whole block's key in order: the hash of its words and the previous block's key."""
        key = 0
        for end in range(self.block, len(words) + 1, self.block):
            key = hash((key, tuple(words[end - self.block : end])))
            yield key

    def cached(self, words: list[str]) -> int:
        """Words at the start of ``words`` in whole cached blocks."""
        n = 0
        for key in self._chain(words):
            if key not in self.keys:
                break
            n += self.block
        return n

    def keep(self, words: list[str]) -> None:
        self.keys.update(self._chain(words))


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
