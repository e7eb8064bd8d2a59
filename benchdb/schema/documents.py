"""The one bounded reader of the documents benchdb is given: config files, hardware files, price
lists and every importer's files (JSON, YAML, CSV, text logs).

A document is someone else's bytes. Each read here is bounded before it starts, so a hostile or
broken file costs a one-line :class:`DocumentError` (naming the file and the limit it broke), never
gigabytes of memory, minutes of CPU or a ``RecursionError``:

- size: at most ``max_bytes`` are read (``max_bytes + 1`` to tell a file at the cap from one past
  it); a regular file over the cap is refused by its size before any of it is read, so a sparse
  8 GiB file costs nothing;
- depth: JSON and YAML nested more than :data:`MAX_DEPTH` levels are refused (the parsers recurse;
  the check after parsing walks with a stack of its own);
- YAML anchors and aliases are refused: an alias repeats what it names, so a few kilobytes of them
  (the "billion laughs") expand into gigabytes, and no file benchdb reads needs them;
- CSV: a field is at most ``field_limit`` characters (set for the read, the module's global restored);
- text streamed line by line: a line is at most ``line_limit`` characters (longer ones are skipped
  unread: no line a reader needs is that long);
- ``within``: a path whose real location (symlinks resolved) leaves that folder is refused, so an
  imported tree cannot make benchdb read files outside it.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from benchdb.errors import BenchdbError, clip, first_line

#: The most a file people write by hand (a config, a hardware file, a price list) may hold: thousands
#: of runs or systems fit in far less, and YAML's reader holds a few hundred bytes per value it reads.
DOCUMENT_BYTES = 2**20
#: The deepest nesting read: the formats benchdb reads nest fewer than 15 levels.
MAX_DEPTH = 100
#: The longest CSV field (the csv module's own default, made explicit for every read).
CSV_FIELD_CHARS = 128 * 1024
#: The longest line a streamed text file may have (longer lines are skipped).
LINE_CHARS = 2**20


class DocumentError(BenchdbError):
    """A document refused by a limit or unreadable: ``str()`` is ``"PATH: problem"``; ``problem``
    alone reads after "is" (``config file X is larger than ...``)."""

    def __init__(self, path: str | os.PathLike, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path = Path(path)
        self.problem = problem


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 10 * 2**20 else f"{n / 2**20:,.1f} MiB".replace(".0 MiB", " MiB")


def _too_large(size: int | None, cap: int) -> str:
    got = f" ({_mib(size)})" if size is not None else ""
    return f"larger than the {_mib(cap)} benchdb reads of such a file{got}; nothing of it was read"


def too_deep(max_depth: int = MAX_DEPTH) -> str:
    return f"nested more than {max_depth} levels deep (no tool writes that many levels)"


def inside(path: str | os.PathLike, root: str | os.PathLike) -> None:
    """Refuse ``path`` when its real location (every symlink on the way resolved) is outside ``root``."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        raise DocumentError(
            path, f"a link out of {clip(str(root), 120)} (to {clip(real, 120)}): benchdb reads only files inside it"
        )


def read_bytes(path: str | os.PathLike, *, max_bytes: int, within: str | os.PathLike | None = None) -> bytes:
    """At most ``max_bytes`` of ``path``; a DocumentError when it holds more (an OSError, the
    caller's to word, when it cannot be opened)."""
    if within is not None:
        inside(path, within)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:  # a regular file's size: refused before reading
            raise DocumentError(path, _too_large(size, max_bytes))
        data = fh.read(max_bytes + 1)  # a pipe or device has no size: read one byte past the cap
    if len(data) > max_bytes:
        raise DocumentError(path, _too_large(None, max_bytes))
    return data


def read_text(
    path: str | os.PathLike,
    *,
    max_bytes: int = DOCUMENT_BYTES,
    within: str | os.PathLike | None = None,
    errors: str = "strict",
) -> str:
    """``path`` as UTF-8 text, bounded as :func:`read_bytes`."""
    data = read_bytes(path, max_bytes=max_bytes, within=within)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise DocumentError(path, f"not a text file (not UTF-8 at byte {exc.start:,})") from None


def read_lines(
    path: str | os.PathLike, *, max_bytes: int, line_limit: int = LINE_CHARS, within: str | os.PathLike | None = None
) -> Iterator[str]:
    """The lines of a text file too large to hold whole (a log), read as they are used; lines over
    ``line_limit`` characters are skipped, and the file may hold at most ``max_bytes``."""
    if within is not None:
        inside(path, within)
    with open(path, encoding="utf-8", errors="replace") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise DocumentError(path, _too_large(size, max_bytes))
        read = 0
        skipping = False
        while line := fh.readline(line_limit):
            read += len(line)
            if read > max_bytes:
                raise DocumentError(path, _too_large(None, max_bytes))
            whole = line.endswith("\n")
            if not skipping and (whole or len(line) < line_limit):
                yield line
            skipping = not whole  # the rest of an over-long line follows: skip it too


def check_depth(doc: Any, path: str | os.PathLike, max_depth: int = MAX_DEPTH) -> Any:
    """``doc`` when no list or mapping in it is nested more than ``max_depth`` deep (walked with a
    stack of its own: the check cannot run out of recursion itself)."""
    stack = [(doc, 1)] if isinstance(doc, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise DocumentError(path, too_deep(max_depth))
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return doc


def parse_json(text: str, path: str | os.PathLike, *, max_depth: int = MAX_DEPTH) -> Any:
    """One JSON document, no deeper than ``max_depth``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        end = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) - 1 else ""
        raise DocumentError(path, f"not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}{end}") from None
    except RecursionError:
        raise DocumentError(path, too_deep(max_depth)) from None
    except ValueError as exc:  # a number past Python's digit limit
        raise DocumentError(path, f"not readable JSON ({clip(first_line(exc), 120)})") from None
    # A document cannot nest deeper than it has brackets: most lines have far fewer than the limit,
    # and counting them costs a fraction of walking the parsed document.
    if text.count("[") + text.count("{") <= max_depth:
        return doc
    return check_depth(doc, path, max_depth)


@cache
def _bounded_loader() -> type:
    """PyYAML's safe loader, refusing anchors, aliases and nesting past the reader's limit."""
    import yaml

    class Bounded(yaml.SafeLoader):
        path: str | os.PathLike = ""
        max_depth = MAX_DEPTH
        depth = 0

        def compose_node(self, parent, index):
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                mark = "*" if isinstance(event, yaml.AliasEvent) else "&"
                raise DocumentError(
                    self.path,
                    f"using a YAML anchor or alias {mark}{clip(str(event.anchor), 40)} at line "
                    f"{event.start_mark.line + 1}: benchdb refuses anchors and aliases (a few of them "
                    "can expand into gigabytes); write the file without them",
                )
            nested = isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent))
            self.depth += nested
            if self.depth > self.max_depth:
                raise DocumentError(self.path, too_deep(self.max_depth))
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= nested

    return Bounded


def _prescan_yaml(text: str, path: str | os.PathLike, max_depth: int) -> None:
    """Refuse deep nesting with libyaml's parser (C) when PyYAML has it: Python's scanner spends about
    half a second on 5,000 opening brackets before the loader sees the 101st level, C a few
    milliseconds. Anything else it finds is left to the loader, which checks everything again."""
    import yaml

    if not getattr(yaml, "__with_libyaml__", False):
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                return  # the loader refuses it, naming its line
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > max_depth:
                    raise DocumentError(path, too_deep(max_depth))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        if "nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's own cap (1,000 levels)
            raise DocumentError(path, too_deep(max_depth)) from None


def parse_yaml(text: str, path: str | os.PathLike, *, max_depth: int = MAX_DEPTH) -> Any:
    """One YAML document without anchors or aliases, no deeper than ``max_depth``."""
    import yaml

    _prescan_yaml(text, path, max_depth)
    loader = _bounded_loader()(text)
    loader.path, loader.max_depth = path, max_depth
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
        where = f": line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = clip(" ".join(str(problem or first_line(exc)).split()), 120)
        raise DocumentError(path, f"not valid YAML{where}: {what}") from None
    except RecursionError:
        raise DocumentError(path, too_deep(max_depth)) from None
    except ValueError as exc:  # a number past Python's digit limit
        raise DocumentError(path, f"not readable YAML ({clip(first_line(exc), 120)})") from None
    finally:
        loader.dispose()


def read_document(
    path: str | os.PathLike,
    *,
    max_bytes: int = DOCUMENT_BYTES,
    max_depth: int = MAX_DEPTH,
    within: str | os.PathLike | None = None,
) -> Any:
    """The JSON (a ``.json`` file) or YAML document in ``path``, within every limit."""
    text = read_text(path, max_bytes=max_bytes, within=within)
    if Path(path).suffix.lower() == ".json":
        return parse_json(text, path, max_depth=max_depth)
    return parse_yaml(text, path, max_depth=max_depth)


def read_csv(
    path: str | os.PathLike,
    *,
    max_bytes: int,
    field_limit: int = CSV_FIELD_CHARS,
    within: str | os.PathLike | None = None,
) -> list[dict[str, Any]]:
    """The rows of a CSV table with a header row, no field longer than ``field_limit`` characters."""
    text = read_text(path, max_bytes=max_bytes, within=within, errors="replace")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    before = csv.field_size_limit(field_limit)
    try:
        return list(reader)
    except csv.Error as exc:
        line = reader.reader.line_num  # the line being read (DictReader's counts finished rows)
        if "field limit" in str(exc):
            problem = f"a CSV table with a field over {field_limit:,} characters at line {line}"
        else:
            problem = f"not a readable CSV table at line {line} ({clip(first_line(exc), 80)})"
        raise DocumentError(path, problem) from None
    finally:
        csv.field_size_limit(before)
