"""benchdb.backends.pytorch.generate: a generative model's timed decode steps, as time to the first
token, time per output token and tokens per second."""

from benchdb.backends.pytorch import generate


def test_token_clock_gives_ttft_and_per_token_tpot():
    times = iter([10.0, 10.5, 10.6, 10.8, 20.0, 20.25, 20.5, 20.75])
    clock = generate.TokenClock(sync=None, clock=lambda: next(times))
    for _ in range(2):
        clock.begin()
        for _ in range(3):
            clock(None, None)

    class M:
        samples = [0.9, 0.8]
        offsets = [0.0, 5.0]

    rows = generate.generation_rows(clock, M, batch=2, tokens=3)
    ttft = [r[4] for r in rows if r[0] == "ttft_s"]
    tpot = [round(r[4], 6) for r in rows if r[0] == "tpot_s"]
    tps = [r[4] for r in rows if r[0] == "tokens_per_s"]
    assert ttft == [0.5, 0.25]
    assert tpot == [0.1, 0.2, 0.25, 0.25]
    assert tps == [2 * 3 / 0.9, 2 * 3 / 0.8]
