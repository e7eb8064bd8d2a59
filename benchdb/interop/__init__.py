"""Other tools' result files: `benchdb import FORMAT PATH... --out DIR` writes contract files
(then `benchdb ingest DIR`), and `benchdb export --format hud-v3|optimum-benchmark`.

One module per format, each with ``FILES`` (the file names it picks from a folder) and
``parse(path) -> list[Imported]`` (raising :class:`~benchdb.interop.writer.SourceError` on bad
input); :mod:`.writer` writes contract files, :mod:`.export_formats` writes the warehouse in other
tools' formats. A bad file is reported with its problem and nothing of it is written; the other
files still are.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.interop.writer import SourceError

#: format name -> module
FORMATS = {
    "optimum-benchmark": "optimum_benchmark",
    "pytest-benchmark": "pytest_benchmark",
    "transformers": "transformers_v2",
    "hud-v3": "hud_v3",
    "mlperf": "mlperf",
}
#: The name recorded as the source format (options.source, result_sources.format).
FORMAT_IDS = {"optimum-benchmark": "optimum-benchmark", "pytest-benchmark": "pytest-benchmark",
              "transformers": "transformers-benchmark-v2", "hud-v3": "hud-v3", "mlperf": "mlperf-loadgen"}


@dataclass
class ImportSummary:
    written: list[Path] = field(default_factory=list)
    imported: list[tuple[Path, int]] = field(default_factory=list)   # source file, results
    failed: list[tuple[Path, str]] = field(default_factory=list)     # source file, problem


def module(fmt: str):
    return importlib.import_module(f"benchdb.interop.{FORMATS[fmt]}")


def load_json(path: Path) -> Any:
    """A JSON document, or a SourceError naming the position where it breaks (truncated files)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SourceError("not a text file (expected JSON)") from None
    if not text.strip():
        raise SourceError("empty file (expected JSON)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        end = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) - 1 else ""
        raise SourceError(f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{end}") from None


def find_sources(fmt: str, paths: list[str]) -> list[Path]:
    """Files given, and inside folders the files the format's tool writes (recursively)."""
    mod = module(fmt)
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found += sorted(f for pattern in mod.FILES for f in p.rglob(pattern) if f.is_file())
        elif p.is_file():
            found.append(p)
        else:
            raise SourceError(f"{p}: no such file or folder")
    if not found:
        raise SourceError(f"no {fmt} files ({', '.join(mod.FILES)}) under {', '.join(paths)}")
    return list(dict.fromkeys(found))


def import_files(fmt: str, paths: list[str], out: str | Path) -> ImportSummary:
    """Convert every source file of ``fmt`` under ``paths`` into contract files under ``out``."""
    from benchdb.interop import writer

    if fmt not in FORMATS:
        raise SourceError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    mod = module(fmt)
    summary = ImportSummary()
    for src in find_sources(fmt, paths):
        try:
            items = mod.parse(src)
            if not items:
                raise SourceError(f"no results in it (is it a {fmt} file?)")
            planned = writer.plan_files(items, FORMAT_IDS[fmt], src, Path(out))
        except SourceError as exc:
            summary.failed.append((src, str(exc)))
            continue
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            summary.failed.append((src, f"unexpected content for {fmt} ({type(exc).__name__}: {exc}); "
                                        f"is it a {fmt} file?"))
            continue
        summary.written += writer.write_all(planned)
        summary.imported.append((src, len(planned)))
    return summary
