"""How busy the machine is with other work: benchdb's own process tree, and the CPU everything else
used over a window (the busy_machine verdict's figure)."""

from __future__ import annotations

import os
import time

import psutil

from benchdb.harness.hardware import ROOT_ENV


def _family() -> list:
    """benchdb's own processes: the root of this command (``$BENCHDB_ROOT_PID``, else this process),
    everything below it (measuring children, the fork server, exporters), and this process."""
    me = psutil.Process()
    try:
        root = psutil.Process(int(os.environ.get(ROOT_ENV) or os.getpid()))
        procs = [root, *root.children(recursive=True)]
    except (ValueError, psutil.Error):
        procs = [*me.children(recursive=True)]
    if me.pid not in {p.pid for p in procs}:
        procs.append(me)
    return procs


def _cpu_seconds(procs: list) -> dict[int, float]:
    out = {}
    for p in procs:
        try:
            t = p.cpu_times()
            out[p.pid] = t.user + t.system
        except psutil.Error:
            continue
    return out


#: (monotonic time, CPU seconds of benchdb's processes) at the end of the last background sample.
_LAST_SAMPLE: tuple[float, dict[int, float]] | None = None


#: The longest gap after which the last sample still starts the next window.
_WINDOW_MAX_S = 60.0


def open_window() -> None:
    """Start the next sample's window now. A measuring child calls it as it starts: loading the
    model then takes the place of the idle window before its first scenario (that load is
    benchdb's own CPU, subtracted like any other)."""
    global _LAST_SAMPLE
    psutil.cpu_percent(interval=None)
    _LAST_SAMPLE = (time.monotonic(), _cpu_seconds(_family()))


def background_cpu_pct(interval_s: float = 0.2) -> float:
    """CPU use by processes other than benchdb's own over the last ``interval_s`` or more (0-100,
    all cores): the machine's CPU use, less that of benchdb's process tree (the command, its
    measuring children, the fork servers, an exporter), which is benchdb's work, not background load.

    The window starts where this process's previous sample ended (or :func:`open_window` opened
    it) at most a minute ago -- the previous scenario's measurement or the model's load, whose own
    CPU is subtracted -- and lasts ``interval_s`` at least (this waits for the rest when it is
    younger), so a process idles only for what its earlier work did not cover. A 1-minute load
    average also counts this process's own previous scenarios; this does not.
    """
    global _LAST_SAMPLE
    now = time.monotonic()
    last = _LAST_SAMPLE
    if last is not None and now - last[0] <= _WINDOW_MAX_S:
        t0, before = last
        if now - t0 < interval_s:
            time.sleep(interval_s - (now - t0))
    else:
        before = _cpu_seconds(_family())
        psutil.cpu_percent(interval=None)
        t0 = time.monotonic()
        time.sleep(interval_s)
    total = psutil.cpu_percent(interval=None)
    elapsed = max(time.monotonic() - t0, 1e-6)
    after = _cpu_seconds(_family())
    _LAST_SAMPLE = (time.monotonic(), after)
    # a process of benchdb's born inside the window (a server the child started) spent all its CPU in it
    own = sum(max(after[pid] - before.get(pid, 0.0), 0.0) for pid in after)
    own_pct = 100.0 * own / (elapsed * (psutil.cpu_count() or 1))
    return float(min(max(total - own_pct, 0.0), 100.0))
