"""benchdb.harness.monitors.frozen_heap: a run measured in benchdb's own process (--no-isolation)
leaves what existed before it out of its garbage collections, as a measuring child does."""

from __future__ import annotations

import gc
import weakref

import pytest

from benchdb.harness.monitors import frozen_heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only a collection frees it


@pytest.mark.core
def test_frozen_heap_leaves_older_objects_out_and_gives_them_back():
    assert gc.get_freeze_count() == 0
    before = _Node()
    with frozen_heap():
        frozen = gc.get_freeze_count()
        assert frozen > 0  # what existed is out of every collection in the block
        young = [_Node() for _ in range(1000)]  # made after the freeze: a second freeze would take them too
        # another thread (xdist's) may free frozen objects, which lowers the count: never raises it
        with frozen_heap():  # a block inside a frozen one changes nothing
            assert gc.get_freeze_count() <= frozen
        made = _Node()
        gone = weakref.ref(made)
        del made
        gc.collect()
        assert gone() is None  # what the run made and dropped is still collected
        assert gc.get_freeze_count() <= frozen
        del young
    assert gc.get_freeze_count() == 0  # given back to the collector
    kept = weakref.ref(before)
    del before
    gc.collect()
    assert kept() is None
