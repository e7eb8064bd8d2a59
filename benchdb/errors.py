"""Errors a user can cause. The CLI prints them as one line and exits non-zero."""

import errno
import os
from collections.abc import Iterable


class BenchdbError(Exception):
    """A user-facing error: the message names the thing and what to do."""

    exit_code = 2

    def __init__(self, message: str = "", *, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class BackendUnavailable(BenchdbError):
    """An optional backend (torch, onnxruntime, openvino, ...) is not installed."""


#: The longest message line benchdb prints about one input (a 10 MB field stays out of the terminal).
LINE_LIMIT = 300


def clip(text: str, limit: int = LINE_LIMIT) -> str:
    """``text`` on one line of at most ``limit`` characters, saying how long it was when cut."""
    text = " ".join(str(text).split("\n"))
    if len(text) <= limit:
        return text
    tail = f"... ({len(text):,} characters)"
    return text[: limit - len(tail)] + tail


_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0D, 0x20), *range(0x7F, 0xA0)]}


def printable(text: str) -> str:
    """``text`` with control characters (terminal escapes, bells, carriage returns) written as
    ``\\xNN``: a value from a file (a device name) can never drive the terminal. Newlines and tabs stay."""
    return str(text).translate(_CONTROL)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type's name when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


#: Writes the machine refuses, never benchdb's mistake: a full disk, a quota, a read-only file
#: system, a file over the size limit.
_REFUSED = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG)


def refused_write(exc: BaseException) -> str | None:
    """``"PATH: reason"`` when ``exc`` is a write the machine refused (an OSError, or a DuckDB or
    Arrow error quoting one); None for anything else."""
    if isinstance(exc, BenchdbError):
        return None
    if isinstance(exc, OSError) and exc.errno in _REFUSED:
        return clip(f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc.strerror))
    text = first_line(exc)
    return clip(text) if any(os.strerror(code) in text for code in _REFUSED) else None


def closest(value: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` closest to a mistyped ``value`` (difflib's ratio, case ignored), or
    None when none is close."""
    import difflib

    by_lower = {str(c).lower(): str(c) for c in choices}
    close = difflib.get_close_matches(str(value).lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[close[0]] if close else None


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'threads'?)`` for the choice :func:`closest` to ``value``, or ``""``."""
    found = closest(value, choices)
    return f" (did you mean {found!r}?)" if found is not None else ""
