"""How every quantity is shown to a person: latencies, throughputs, percentages, sizes, durations and
timestamps, in the terminal, Markdown, HTML and plots (the dashboard's ``fmt.js`` follows the same rules).

Rules, decided once:

- A column shares one unit: :func:`scale` looks at all of a column's values and picks the engineering
  unit (s / ms / µs / ns; B / KiB / MiB / GiB) that its typical value reads best in, so ``0.6 ms`` and
  ``12.0 ms`` sit under each other, never ``600 µs`` beside ``12 ms``. A column whose values span more
  than SPAN (50 µs beside 2.5 s) shows each value in its own unit instead: one unit would print the
  small ones with one digit (``0.05 ms``) or the large ones with eight.
- Enough significant digits: at least 4 for the typical value, and more (up to 9 decimals) while two
  values that differ would print the same, so both sides of a reported +1.2 % change differ in print.
- Percentages are signed where they are changes (``+1.2%``), with as many decimals as the same rule needs.
- Durations read as people say them (``850 ms``, ``12 s``, ``4 min 10 s``, ``1 h 05 min``); timestamps as
  ``2026-11-01 10:00 UTC``.

Raw values stay raw where a program reads them (``benchdb query``, JSON, CSV).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

#: Seconds: (factor, unit) from the largest; a column's typical value picks the first it is >= 1 in.
TIME_UNITS = ((1.0, "s"), (1e3, "ms"), (1e6, "µs"), (1e9, "ns"))
#: Bytes, binary units.
SIZE_UNITS = ((1 / 2**30, "GiB"), (1 / 2**20, "MiB"), (1 / 2**10, "KiB"), (1.0, "B"))
#: Significant digits of a column's typical value.
DIGITS = 4
#: The most decimals a value gets while telling two values apart.
MAX_DECIMALS = 9
#: The largest ratio of a column's values that still shares one unit.
SPAN = 1000.0


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _numbers(values: Iterable[Any]) -> list[float]:
    return [float(v) for v in values if _finite(v)]


def _typical(values: list[float]) -> float:
    """The size a column's unit is chosen by: the median of its non-zero magnitudes."""
    sizes = sorted(abs(v) for v in values if v != 0)
    return sizes[len(sizes) // 2] if sizes else 0.0


def _decimals(
    values: list[float], factor: float, digits: int = DIGITS, fixed: int | None = None, typical: float | None = None
) -> int:
    """Decimals that give the typical value ``digits`` significant digits (``fixed``: that many at
    least), raised until every two different values print differently (at most MAX_DECIMALS).
    ``typical``: the values' typical size, where the caller knows it."""
    typical = (_typical(values) if typical is None else typical) * factor
    if fixed is not None:
        dec = fixed
    elif typical == 0:
        dec = 0
    else:
        dec = max(0, min(MAX_DECIMALS, digits - 1 - math.floor(math.log10(typical))))
    distinct = sorted(set(values))
    while dec < MAX_DECIMALS:
        printed = {f"{v * factor:.{dec}f}" for v in distinct}
        if len(printed) == len(distinct):
            break
        dec += 1
    return dec


@dataclass(frozen=True)
class Scale:
    """How one column (or one pair of values) is printed: a factor, a unit and a number of decimals."""

    factor: float = 1.0
    unit: str = ""
    decimals: int = 0
    signed: bool = False
    #: "%" is written against the number (+1.2%); any other unit after a space (1.613 µs).
    grouped: bool = True
    #: A column too wide-ranging for one unit: each value in its own ("time" or "size").
    each: str = ""

    def __call__(self, v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        if not _finite(v):
            return str(v)
        if self.each:
            return (time_scale if self.each == "time" else size_scale)([v])(v)
        sign = "+" if self.signed else ""
        comma = "," if self.grouped else ""
        text = f"{float(v) * self.factor:{sign}{comma}.{self.decimals}f}"
        if text.lstrip("+-").strip("0.,") == "" and text.startswith("-"):
            text = text[1:]  # -0.0 reads as a change that is not there
        if not self.unit:
            return text
        return f"{text}{self.unit}" if self.unit == "%" else f"{text} {self.unit}"


def _spans(nums: list[float]) -> bool:
    sizes = [abs(v) for v in nums if v != 0]
    return bool(sizes) and max(sizes) > SPAN * min(sizes)


def time_scale(values: Iterable[Any], axis: bool = False) -> Scale:
    """Seconds in one unit for the whole column (each value in its own where they span > SPAN, except
    on a plot's ``axis``, which has one unit)."""
    nums = _numbers(values)
    return _time_scale(nums, _typical(nums), axis)


def _time_scale(nums: list[float], typical: float, axis: bool = False) -> Scale:
    if _spans(nums) and not axis:
        return Scale(each="time")
    factor, unit = TIME_UNITS[-1]
    for f, u in TIME_UNITS:
        if typical * f >= 1:
            factor, unit = f, u
            break
    if typical == 0:
        factor, unit = 1e3, "ms"
    return Scale(factor, unit, _decimals(nums, factor, typical=typical))


def size_scale(values: Iterable[Any]) -> Scale:
    nums = _numbers(values)
    return _size_scale(nums, _typical(nums))


def _size_scale(nums: list[float], typical: float) -> Scale:
    if _spans(nums):
        return Scale(each="size")
    factor, unit = 1.0, "B"
    for f, u in SIZE_UNITS:
        if typical * f >= 1:
            factor, unit = f, u
            break
    return Scale(factor, unit, 0 if unit == "B" else _decimals(nums, factor, digits=3, fixed=1))


def rate_scale(values: Iterable[Any], unit: str = "") -> Scale:
    """Throughputs and other plain numbers: 4 significant digits (one decimal from 100 up), thousands
    grouped."""
    nums = _numbers(values)
    return _rate_scale(nums, _typical(nums), unit)


def _rate_scale(nums: list[float], typical: float, unit: str = "") -> Scale:
    return Scale(1.0, unit, _decimals(nums, 1.0, fixed=1 if typical >= 100 else None, typical=typical))


def percent_scale(values: Iterable[Any], signed: bool = True) -> Scale:
    """Fractions as percentages (0.012 -> +1.2%): one decimal, more where two values would merge."""
    nums = _numbers(values)
    return Scale(100.0, "%", _decimals(nums, 100.0, fixed=1), signed=signed)


def points_scale(values: Iterable[Any]) -> Scale:
    """Values already in percent (a CPU load of 41.0): one decimal, unsigned."""
    nums = _numbers(values)
    return Scale(1.0, "%", _decimals(nums, 1.0, fixed=1))


def ratio_scale(values: Iterable[Any]) -> Scale:
    nums = _numbers(values)
    return Scale(1.0, "", _decimals(nums, 1.0, fixed=2))


#: Column kinds (benchdb.reports.document.Column.fmt) that share a unit per column.
_SCALES = {
    "ms": time_scale,
    "time": time_scale,
    "mib": size_scale,
    "size": size_scale,
    "num": rate_scale,
    "pct": percent_scale,
    "points": points_scale,
    "ratio": ratio_scale,
}


def scale(kind: str, values: Iterable[Any]) -> Scale | None:
    """The column's scale for ``kind`` (ms/time, mib/size, num, pct: a fraction, points: already in
    percent, ratio); None: not a quantity."""
    make = _SCALES.get(kind)
    return make(values) if make else None


def quantity(v: Any, unit: str | None, *others: Any) -> str:
    """One measured value with its unit as stored in the warehouse (s, bytes, items/s, ...), in the
    scale it shares with ``others`` (the other side of a comparison)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    values = [v, *others]
    if unit == "s":
        return time_scale(values)(v)
    if unit == "bytes":
        return size_scale(values)(v)
    return rate_scale(values, unit or "")(v)


def quantities(values: Iterable[Any], unit: str | None) -> Callable[[Any], str]:
    """:func:`quantity` of each value of ``values`` against all of them: ``fmt(v) == quantity(v, unit,
    *values)`` for v among ``values``, without a pass over all of them per value (a gate of 2,500
    series prints 5,000 medians that share a scale). A value's own copy counts in the typical size
    (its list holds it twice), so at most two typical sizes, and two scales, occur."""
    values = list(values)
    nums = _numbers(values)
    have = set(nums)
    sizes = sorted(abs(v) for v in nums if v != 0)
    make = _time_scale if unit == "s" else _size_scale if unit == "bytes" else None
    made: dict[float, Scale] = {}

    def fmt(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        if _finite(v) and float(v) not in have:
            return quantity(v, unit, *values)
        typical = _typical_with(sizes, float(v)) if _finite(v) else _typical(nums)
        scale = made.get(typical)
        if scale is None:
            scale = made[typical] = make(nums, typical) if make else _rate_scale(nums, typical, unit or "")
        return scale(v)

    return fmt


def _typical_with(sizes: list[float], v: float) -> float:
    """``_typical`` of the values whose sorted non-zero magnitudes are ``sizes``, with ``v`` added."""
    if v == 0:
        return sizes[len(sizes) // 2] if sizes else 0.0
    at, mid = bisect_left(sizes, abs(v)), (len(sizes) + 1) // 2
    return sizes[mid] if mid < at else abs(v) if mid == at else sizes[mid - 1]


def seconds(v: Any) -> str:
    """One latency on its own scale: 1.613 µs, 0.6012 ms, 2.100 s."""
    return time_scale([v])(v)


def percent(v: Any, signed: bool = True, decimals: int = 1) -> str:
    """A fraction as a percentage: 0.012 -> '+1.2%'."""
    return Scale(100.0, "%", decimals, signed=signed)(v)


def size(v: Any) -> str:
    return size_scale([v])(v)


def duration(v: Any) -> str:
    """A span of time as people say it: '850 ms', '12 s', '4 min 10 s', '1 h 05 min', '3 d 04 h'."""
    if not _finite(v):
        return ""
    s = float(v)
    if abs(s) < 1:
        return seconds(s)
    if abs(s) < 60:
        return f"{s:.3g} s"
    total = round(s)
    d, rest = divmod(total, 86400)
    h, rest = divmod(rest, 3600)
    m, sec = divmod(rest, 60)
    if d:
        return f"{d} d {h:02d} h"
    if h:
        return f"{h} h {m:02d} min"
    return f"{m} min {sec:02d} s" if sec else f"{m} min"


def timestamp(v: Any) -> str:
    """A point in time as people read it: '2026-11-01 10:00 UTC' (a date alone as '2026-11-01')."""
    if v is None:
        return ""
    if isinstance(v, str):
        try:
            v = datetime.fromisoformat(v)
        except ValueError:
            return v
    if isinstance(v, datetime):
        if v.tzinfo is not None:
            return v.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        return v.strftime("%Y-%m-%d %H:%M")
    if isinstance(v, date):
        return v.isoformat()
    return str(v)


# --- plots ------------------------------------------------------------------------------------------

#: The share of samples a histogram shows: the tails beyond are counted, not drawn.
CLIP = (0.5, 99.5)


def clip_range(values: Iterable[Any], low: float = CLIP[0], high: float = CLIP[1]) -> tuple[float, float, int]:
    """The ``low``-``high`` percentile range of ``values`` and how many samples fall outside it
    (a histogram drawn over this range is not stretched by one outlier)."""
    nums = sorted(_numbers(values))
    if not nums:
        return 0.0, 0.0, 0
    # the samples at the quantiles' lower ranks: among 90 samples the one outlier is left out (an
    # interpolated 99.5 % point would lie most of the way to it)
    last = len(nums) - 1
    lo, hi = nums[math.floor(last * low / 100)], nums[math.floor(last * high / 100)]
    return lo, hi, sum(1 for v in nums if v < lo or v > hi)


def clip_note(outside: int, total: int, low: float = CLIP[0], high: float = CLIP[1]) -> str:
    """What a clipped histogram says under it."""
    return f"{low:g}-{high:g} % of samples shown" + (f"; {outside} of {total} outside" if outside else "")


def seconds_axis(ax: Any, values: Iterable[Any], which: str = "y", label: str = "latency") -> Scale:
    """A matplotlib axis of seconds in the column's unit: ticks as plain numbers in that unit, the unit
    in the axis label ('latency (µs)'), never seven decimals."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    sc = time_scale(values, axis=True)
    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_locator(MaxNLocator(nbins=6))
    axis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x * sc.factor:.4g}"))
    (ax.set_ylabel if which == "y" else ax.set_xlabel)(f"{label} ({sc.unit})")
    return sc


def date_axis(ax: Any, which: str = "x") -> None:
    """A matplotlib axis of datetimes as people read them: dates, and times of day where the span is
    short (ConciseDateFormatter: '10:00', 'Nov 02', 2026 once), never '19:09.000000'."""
    import matplotlib.dates as mdates

    axis = ax.xaxis if which == "x" else ax.yaxis
    locator = mdates.AutoDateLocator(minticks=3, maxticks=7)
    formatter = mdates.ConciseDateFormatter(locator, show_offset=True)
    formatter.formats = ["%Y", "%b", "%d %b", "%H:%M", "%H:%M", "%S.%f"]
    formatter.zero_formats = ["", "%Y", "%b", "%d %b", "%H:%M", "%H:%M"]
    formatter.offset_formats = ["", "%Y", "%b %Y", "%d %b %Y", "%d %b %Y", "%d %b %Y %H:%M"]
    axis.set_major_locator(locator)
    axis.set_major_formatter(formatter)
