"""The stub's known truths (benchdb.testing.stub_cache): its prefix cache hits whole blocks of a
matching prefix only, and its load shapes slow the requests they name."""

from __future__ import annotations


def test_the_stubs_prefix_cache_hits_whole_blocks_of_a_matching_prefix_only():
    from benchdb.testing.stub_cache import PrefixCache

    cache = PrefixCache(block=4)
    words = [f"w{i}" for i in range(1600)]
    cache.keep(words)
    assert len(cache.keys) == 400  # a key a block: memory grows with the prompt, not its square
    assert cache.cached(words) == 1600 and cache.cached(words[:10]) == 8  # whole blocks only
    assert cache.cached(["x", *words[1:]]) == 0  # the first block differs: nothing after it hits
    assert cache.cached(words[:6] + ["x"] + words[7:]) == 4  # a change in block 2 ends the hits there
    assert cache.cached(words[4:]) == 0  # the same words after another prefix are another sequence


def test_the_stubs_load_shapes_slow_the_requests_they_name():
    from benchdb.testing.stub_cache import itl_factor

    assert [itl_factor("warmup:2:3", n) for n in (1, 2, 3)] == [3.0, 3.0, 1.0]
    assert [itl_factor("drain:2:2", n) for n in (2, 3)] == [1.0, 2.0]
    assert itl_factor("drift:0.5", 4) == 3.0 and itl_factor("", 7) == 1.0
