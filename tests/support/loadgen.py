"""A short load point against the stub server and the checks of what it measured against the
stub's own timeline, shared by tests/backends/test_openai_loadgen.py (one client) and
test_openai_workers.py (client worker processes). Imported after the test module's
``need_module("httpx", ...)``: the load generator needs it."""

from __future__ import annotations

import statistics

from benchdb.harness.timing import StopRule

#: The stub's time to the first token and between tokens, in ms.
TTFT_MS, ITL_MS = 40.0, 8.0


def spec(url: str, **kw):
    """A short load point that stops at ``max_iters`` requests (the CI target is out of reach)."""
    from benchdb.backends.openai.loadgen import LoadSpec

    n = kw.pop("n", 24)
    rule = kw.pop(
        "rule",
        StopRule(warmup_iters=0, min_iters=min(5, n), min_time_s=0.0, max_time_s=20.0, max_iters=n, target_ci=1e-6),
    )
    base = dict(
        base_url=url,
        model="stub",
        prompts=["hello there", "a b c d"],
        max_tokens=12,
        concurrency=kw.pop("concurrency", None if "rate" in kw else 4),
        rule=rule,
        request_timeout_s=10.0,
    )
    return LoadSpec(**{**base, **kw})


def medians(result) -> tuple[float, float]:
    from benchdb.schema.serving_request import request_metrics

    ms = [m for m in (request_metrics(r) for r in result.measured) if m is not None]
    return (
        statistics.median(m.ttft for m in ms if m.ttft is not None),
        statistics.median(x for m in ms for x in m.itl_token),
    )


def near(value: float, target_ms: float, rel: float = 0.3) -> bool:
    """``value`` (s) is the stub's delay: at most ``rel`` below it, and at most twice it plus 15 ms
    above, since a busy machine only adds time (a loaded CI read 52 ms for the stub's 40 ms TTFT).
    A figure measured from the wrong event (a TTFT of the role chunk: ~0; an ITL that is a TTFT:
    40 ms for 8) still fails."""
    target = target_ms / 1e3
    return target * (1 - rel) <= value <= 2 * target + 0.015
