"""How long each test took in a past run, so that xdist starts the longest work first.

Under pytest-xdist a worker that picks up a 5-minute module near the end keeps the run going alone
while the other worker idles. Handing out work longest first (the classic LPT rule) lets the short
tests fill in around the long ones. The estimates live in ``tests/durations.txt``, one line per
test: seconds (setup, call and teardown together), a space, the node id. They only order the work:
a test missing from the file (a new one) counts as ``DEFAULT_S``, a stale line is ignored, and no
test's outcome depends on them.

Refresh the file after the suite's shape changes::

    BENCHDB_WRITE_DURATIONS=tests/durations.txt .venv/bin/python -m pytest
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

#: The file the scheduler reads, beside the tests.
FILE = Path(__file__).resolve().parents[1] / "durations.txt"
#: What a test missing from the file is taken to cost: about the median of the suite's tests.
DEFAULT_S = 0.3


def read(path: Path = FILE) -> dict[str, float]:
    """Node id -> seconds; empty where the file is missing. A malformed line is skipped: an
    estimate only orders the work."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    seconds: dict[str, float] = {}
    for line in text.splitlines():
        value, _, nodeid = line.partition(" ")
        try:
            seconds[nodeid] = float(value)
        except ValueError:
            continue
    return seconds


def cost(nodeids: Iterable[str], seconds: Mapping[str, float]) -> float:
    """The estimated seconds of a unit of work: its tests' estimates summed."""
    return sum(seconds.get(nodeid, DEFAULT_S) for nodeid in nodeids)


def longest_first(units: Mapping[str, Iterable[str]], seconds: Mapping[str, float]) -> list[str]:
    """The units' names (xdist scopes), the costliest first; equal costs keep their given order."""
    order = {name: i for i, name in enumerate(units)}
    return sorted(units, key=lambda name: (-cost(units[name], seconds), order[name]))


def write(path: Path, seconds: Mapping[str, float]) -> None:
    """One line per test, the longest first, to the tenth of a millisecond."""
    lines = [f"{s:.4f} {nodeid}" for nodeid, s in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
