"""What an error a user can cause says (benchdb.errors): one clipped line, control characters made
visible, a write the machine refused told apart from anything else, and the closest of the choices
named for a mistyped value."""

from __future__ import annotations

import errno

import pytest

from benchdb import errors
from benchdb.errors import BackendUnavailable, BenchdbError

pytestmark = pytest.mark.core


def test_an_error_exits_2_unless_it_says_otherwise():
    assert BenchdbError("x").exit_code == 2 and BenchdbError("x", exit_code=3).exit_code == 3
    assert BackendUnavailable("no torch").exit_code == 2 and isinstance(BackendUnavailable(), BenchdbError)


def test_a_long_value_is_one_line_that_says_how_long_it_was():
    assert errors.clip("a\nb") == "a b"
    short = "x" * errors.LINE_LIMIT
    assert errors.clip(short) == short
    cut = errors.clip("y" * 10_000, 60)
    assert len(cut) == 60 and cut.endswith("... (10,000 characters)") and cut.startswith("y")


def test_control_characters_are_written_out_and_newlines_and_tabs_stay():
    assert errors.printable("Evil\x1b[2J\x07 CPU\r\x7f\x9b") == "Evil\\x1b[2J\\x07 CPU\\x0d\\x7f\\x9b"
    assert errors.printable("a\tb\nc é") == "a\tb\nc é"


def test_first_line_or_the_type_name():
    assert errors.first_line(ValueError("  one\ntwo")) == "one" and errors.first_line(KeyError()) == "KeyError"


def test_a_write_the_machine_refused_names_the_path_and_nothing_else_does():
    full = OSError(errno.ENOSPC, "No space left on device", "/data/w.duckdb")
    assert errors.refused_write(full) == "/data/w.duckdb: No space left on device"
    assert errors.refused_write(OSError(errno.EROFS, "Read-only file system")) == "Read-only file system"
    quoted = RuntimeError('IO Error: Could not write file "x": No space left on device\nmore')
    assert errors.refused_write(quoted) == 'IO Error: Could not write file "x": No space left on device'
    assert errors.refused_write(OSError(errno.ENOENT, "No such file or directory", "x")) is None
    assert errors.refused_write(BenchdbError("No space left on device")) is None
    assert errors.refused_write(ValueError("bad")) is None


def test_a_mistyped_value_names_the_closest_choice_or_nothing():
    choices = ["threads", "Batch_Size", "precision"]
    assert errors.closest("thread", choices) == "threads" and errors.closest("batch_size", choices) == "Batch_Size"
    assert errors.did_you_mean("precison", choices) == " (did you mean 'precision'?)"
    assert errors.closest("zzz", choices) is None and errors.did_you_mean("zzz", choices) == ""
