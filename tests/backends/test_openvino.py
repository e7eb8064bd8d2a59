"""benchdb.backends.openvino.backend: the THROUGHPUT hint's queue of asynchronous requests, measured
as items completed over wall time (a simulated queue on a simulated clock)."""

from __future__ import annotations

import pytest


class _FakeQueue:
    """Requests that each take ``service`` seconds on a simulated clock (OpenVINO's idle order)."""

    def __init__(self, size: int, service: float):
        self.size, self.service, self.now = size, service, 0.0
        self.idle_ids = list(range(size))
        self.running: dict[int, float] = {}  # request -> end time

    def first(self):
        self.now += self.service

    def idle(self):
        if not self.idle_ids:
            i = min(self.running, key=lambda k: (self.running[k], k))
            self.now = max(self.now, self.running.pop(i))
            self.idle_ids.append(i)
        return self.idle_ids[0]

    def start(self):
        self.running[self.idle_ids.pop(0)] = self.now + self.service

    def latency_s(self, i):
        return self.service

    def wait_all(self):
        for i, end in sorted(self.running.items()):
            self.now = max(self.now, end)
            self.idle_ids.append(i)
        self.running.clear()


def test_queue_throughput_is_items_completed_over_wall_time():
    from benchdb.backends.openvino.backend import measure_queue
    from benchdb.harness.timing import StopRule

    queue = _FakeQueue(size=3, service=0.5)
    rule = StopRule(warmup_iters=2, warmup_s=0, min_iters=10, min_time_s=50.0, max_time_s=100)
    m, rows = measure_queue(queue, rule, items=4, clock=lambda: queue.now)
    # 3 requests of 0.5 s always busy: 6 requests/s, 4 items each (one request at a time: 8 items/s);
    # fill and drain are outside the window, its edges are worth at most a completion or two
    assert rows == [("throughput_items_s", "items/s", 0, 0.0, pytest.approx(24.0, rel=0.01))]
    assert m.first_call_s == 0.5 and m.stop_reason == "converged"
    assert len(m.samples) >= 10 and set(m.samples) == {0.5}
    assert m.offsets == sorted(m.offsets) and m.offsets[0] >= 0
    assert not queue.running  # drained
