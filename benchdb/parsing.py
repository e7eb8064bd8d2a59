"""One reading of percentages, durations and sizes, for every option and config key.

- **A share** (a threshold, a CI target, a CPU limit, an accuracy drop): ``5%``, or the fraction
  ``0.05``. A bare number is accepted only below 1, and then it is a fraction; ``5`` (or ``1``) could
  mean 5 % or 500 %, so it is refused with "did you mean 5%?".
- **A duration**: a number and a unit, ``500ms``, ``2s``, ``30m``, ``12h``, ``7d``, ``2w``. A bare
  number is in the option's own unit: seconds, or milliseconds for an option named ``...-ms`` (old
  names only: docs/reference/option-rules.md).
- **A size**: ``512MiB``, ``2GiB`` (powers of 1024), ``2GB``, ``500kB`` (powers of 1000), ``4096B``. A
  bare number is refused ("did you mean 512MiB?"): nobody means bytes; an old option named ``...-mb``
  reads it as MiB.

Config files take the same text, or a number (read as a bare number). Errors are
:class:`QuantityError` (a ``ValueError``) whose message does not name the option: the caller does.

Only the standard library: the command line's help imports this.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

#: How the forms are written in help texts.
SHARE_FORMS = "5% or 0.05"
DURATION_FORMS = "500ms, 2s, 30m, 12h, 7d"
SIZE_FORMS = "512MiB, 2GiB, 2GB"

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_SIZE_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_NUMBER_UNIT = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*([a-z%]*)$", re.IGNORECASE)


class QuantityError(ValueError):
    """A value that is not a share, duration or size (the message says what to write)."""


def _split(value: str | float | int, forms: str) -> tuple[float, str]:
    """(number, unit as written) of ``value``; a number has unit ``""``."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a number; write e.g. {forms}")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        m = _NUMBER_UNIT.match(str(value).strip())
        if not m:
            raise QuantityError(f"{str(value)!r} is not like {forms}")
        number, unit = float(m.group(1)), m.group(2)
    if not math.isfinite(number):
        raise QuantityError(f"{value!r} is not a finite number; write e.g. {forms}")
    if number < 0:
        raise QuantityError(f"{value!r} is negative; write e.g. {forms}")
    return number, unit


def share(value: str | float | int, *, minimum: float = 0.0, maximum: float = 1.0) -> float:
    """A share as a fraction: ``'5%'`` and ``0.05`` -> 0.05; ``'5'`` is refused (5 % or 500 %?).

    ``minimum`` and ``maximum`` are fractions (1.0: 100 %)."""
    number, unit = _split(value, SHARE_FORMS)
    if unit == "%":
        v = number / 100.0
    elif unit:
        raise QuantityError(f"{value!r} is not like {SHARE_FORMS}")
    elif number >= 1:
        raise QuantityError(
            f"{value!r} could mean {number:g}% or {number * 100:g}%; did you mean {number:g}%? "
            f"(a bare number is a fraction below 1, e.g. {number / 100:g})"
        )
    else:
        v = number
    if not minimum <= v <= maximum:
        raise QuantityError(f"{value!r} is out of range; give {percent_text(minimum)} to {percent_text(maximum)}")
    return v


def percent_text(fraction: float) -> str:
    """A fraction as a share that :func:`share` reads back exactly: 0.05 -> '5%' (else the fraction
    itself, 0.123456789012 -> '0.123456789012')."""
    text = f"{fraction * 100:.10g}"
    if float(text) / 100.0 == fraction or fraction >= 1:
        return text + "%"
    return repr(float(fraction))


def _scaled(
    value: str | float | int, forms: str, units: Mapping[str, float], bare: str | None, kind: str, guess: str = ""
) -> float:
    """``value``'s number times its unit's factor (``bare`` for a bare number; None: a bare number is
    refused, suggesting the unit ``guess``)."""
    number, unit = _split(value, forms)
    if not unit and bare is None:
        raise QuantityError(f"{value!r} has no unit; did you mean {number:g}{guess}? (write e.g. {forms})")
    factor = units.get((unit or bare or "").lower())
    if factor is None:
        raise QuantityError(f"{value!r}: {unit!r} is not a unit of {kind}; write e.g. {forms}")
    return number * factor


def duration(value: str | float | int, *, bare: str = "s", minimum: float = 0.0) -> float:
    """A duration in seconds: ``'500ms'`` -> 0.5, ``'12h'`` -> 43200; a bare number is in ``bare``
    (a unit of :data:`DURATION_FORMS`)."""
    seconds = _scaled(value, DURATION_FORMS, _DURATION_UNITS, bare, "time")
    if seconds < minimum:
        raise QuantityError(f"{value!r} is too short; give at least {duration_text(minimum)}")
    return seconds


def duration_text(seconds: float) -> str:
    """Seconds as a duration that :func:`duration` reads back exactly: 0.5 -> '0.5s', 60.0 -> '60s'."""
    return repr(float(seconds)).removesuffix(".0") + "s"


def size(value: str | float | int, *, bare: str | None = None, minimum: float = 0.0) -> float:
    """A size in bytes: ``'512MiB'`` -> 536870912, ``'2GB'`` -> 2e9; a bare number is in ``bare``
    (None: refused, "did you mean 512MiB?")."""
    size_bytes = _scaled(value, SIZE_FORMS, _SIZE_UNITS, bare, "size", guess="MiB")
    if size_bytes < minimum:
        raise QuantityError(f"{value!r} is too small; give at least {minimum:g} bytes")
    return size_bytes
