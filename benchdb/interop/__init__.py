"""Other tools' result files: `benchdb import FORMAT PATH... --out DIR` writes contract files
(then `benchdb ingest DIR`), and `benchdb export --format hud-v3|optimum-benchmark|...`.

One module per format, registered in :mod:`.formats`, each with ``FILES`` (the file names it
picks from a folder) and ``parse(path) -> list[Imported]`` (raising
:class:`~benchdb.interop.writer.SourceError` on bad input); :mod:`.writer` writes contract files,
:mod:`.export_formats` writes the warehouse in other tools' formats. A bad file is reported with its
problem and nothing of it is written; the other files still are. This module imports no contract
code until a file is read: the command line reads the registry at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchdb.errors import clip
from benchdb.interop import formats

if TYPE_CHECKING:
    from benchdb.interop.writer import Imported

#: The largest source file read (bytes): a report that big is far beyond any tool's real output, and
#: reading it whole would hold several times its size in memory.
MAX_SOURCE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class Declared:
    """What the user states about results whose files do not say it: the hardware they ran on
    (``--hardware NAME`` or ``--hardware-file FILE``) and the serving engine (``--engine``). A file
    that names either itself wins only where the two agree; this machine's fingerprint is never
    taken by default (an imported result ran elsewhere, or at another time)."""

    hardware: dict[str, Any] | None = None
    device: str | None = None
    engine: str | None = None
    model: str | None = None
    precision: str | None = None
    #: How the results used the hardware (a hardware file's accelerators and parallelism).
    usage: dict[str, Any] = field(default_factory=dict)
    #: MLPerf: the round the results were submitted to (``--round``), where the repository does not say.
    mlperf_round: str | None = None

    def apply(self, item: Imported) -> None:
        from benchdb.interop.writer import SourceError

        if self.model and item.settings.get("model_declarable"):
            item.model_id = self.model  # the id benchdb knows the model by (lm-eval: its scores' model)
        if self.precision and item.settings.get("precision_declarable"):
            if item.precision not in ("unknown", self.precision):
                raise SourceError(
                    f"the file names its precision ({item.precision}); --precision {self.precision} contradicts it"
                )
            item.precision = self.precision
        elif item.settings.get("precision_declarable") and item.precision == "unknown":
            raise SourceError(
                "the file names no precision (no dtype in model_args): give --precision fp32|fp16|bf16|int8|int4"
            )
        if not item.model_id:
            if not self.model:
                raise SourceError(
                    "the file names no model (an SGLang line against a server without /server_info): give --model NAME"
                )
            item.model_id = self.model
        if self.hardware is not None:
            named = item.hardware.get("kind") not in (None, "unknown")
            if named and item.hardware.get("device_name") != self.hardware.get("device_name"):
                raise SourceError(
                    f"the file names its hardware ({item.hardware.get('device_name')}); "
                    "leave out --hardware/--hardware-file for it"
                )
            if not named:
                item.hardware, item.device = dict(self.hardware), self.device or item.device
                for key, value in self.usage.items():
                    item.options.setdefault(key, value)
        if self.engine is not None and item.mode in ("completions", "chat"):
            named_engine = item.options.get("engine") if item.settings.get("engine_named_by_file") else None
            if named_engine and named_engine != self.engine:
                raise SourceError(f"the file names its engine ({named_engine}); --engine {self.engine} contradicts it")
            item.options["engine"], item.backend = self.engine, self.engine


def declared_hardware(name: str | None, file: str | None) -> tuple[dict[str, Any] | None, str | None, dict[str, Any]]:
    """(system, device, usage) from ``--hardware NAME`` or ``--hardware-file FILE``: a hardware file
    (YAML or JSON, :mod:`benchdb.schema.system`; its ``accelerators`` and ``parallelism`` become each
    result's usage options), the JSON of ``benchdb hardware --format json`` run on that machine (its
    first accelerator, else its CPU) or one fingerprint object (``SELECT fingerprint FROM hardware``)."""
    from benchdb.harness.hardware import declared
    from benchdb.interop.writer import SourceError
    from benchdb.schema import system

    if name and file:
        raise SourceError("give --hardware NAME or --hardware-file FILE, not both")
    if name:
        fp = declared(name)
        return fp, f"remote:{fp['device_name']}", {}
    if not file:
        return None, None, {}
    try:
        return _hardware_file(file)
    except system.SystemError as exc:
        raise SourceError(f"--hardware-file {exc}") from None


def _hardware_file(file: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    from benchdb.schema import system
    from benchdb.schema.identity import normalize_device

    doc = system.read_document(file)
    if (
        isinstance(doc, dict)
        and isinstance(doc.get("cpu"), dict)
        and "accelerators" in doc
        and isinstance(doc.get("host"), str)
    ):  # the whole report of `benchdb hardware --format json`
        accels = [a for a in doc.get("accelerators") or [] if isinstance(a, dict)]
        if accels:
            acc = accels[0]
            fp = acc.get("fingerprint") or {
                "kind": acc.get("kind"),
                "device_name": acc.get("name"),
                "memory_bytes": acc.get("memory_bytes"),
            }
            return dict(fp), normalize_device(str(acc.get("device") or f"{fp.get('kind')}:0")), {}
        return dict(doc["cpu"]), "cpu", {}
    if (
        isinstance(doc, dict)
        and doc.get("device_name")
        and doc.get("kind")
        and "fingerprint" not in doc
        and not set(doc) & {"accelerator", "cpu", "accelerators", "parallelism"}
    ):
        fp = dict(doc)  # one stored fingerprint, as it is
    else:
        fp = system.normalize(doc if doc is not None else {}, str(file))
    usage = system.usage(doc, str(file)) if isinstance(doc, dict) else {}
    kind = str(fp["kind"])
    device = "cpu" if kind == "cpu" else normalize_device(f"{kind}:0") if kind in ("cuda", "rocm", "xpu") else kind
    return fp, device, usage


@dataclass
class ImportSummary:
    written: list[Path] = field(default_factory=list)
    imported: list[tuple[Path, int]] = field(default_factory=list)  # source file, results
    failed: list[tuple[Path, str]] = field(default_factory=list)  # source file, problem
    #: Lines a format reports beyond its files (MLPerf: where a run disagrees with the published table).
    notes: list[str] = field(default_factory=list)
    #: What a format adds to the summary line (MLPerf: runs, systems, skipped compliance runs, checks).
    detail: str = ""


def module(fmt: str):
    """The module that reads format ``fmt`` (:data:`benchdb.interop.formats.IMPORTERS`)."""
    import importlib

    return importlib.import_module(f"benchdb.interop.{formats.importer(fmt).module}")


#: Why a document nested past what the parser follows is refused (JSON's and YAML's readers recurse).
TOO_DEEP = "nested too deeply to read (no tool writes that many levels)"


def load_json(path: Path, *, max_bytes: int = MAX_SOURCE_BYTES, within: Path | None = None) -> Any:
    """A JSON document through the bounded reader (:mod:`benchdb.schema.documents`), or a SourceError
    naming the position where it breaks (truncated files) or the limit it broke."""
    from benchdb.interop.writer import SourceError
    from benchdb.schema import documents

    try:
        text = documents.read_text(path, max_bytes=max_bytes, within=within)
        if not text.strip():
            raise SourceError("empty file (expected JSON)")
        return documents.parse_json(text, path)
    except documents.DocumentError as exc:
        raise SourceError(exc.problem) from None


def load_yaml(path: Path) -> Any:
    """A YAML document through the bounded reader: no anchors or aliases (``&a`` / ``*a``: an alias
    repeats what it names, so a few kilobytes of them expand into gigabytes), no deep nesting."""
    from benchdb.interop.writer import SourceError
    from benchdb.schema import documents

    try:
        return documents.parse_yaml(documents.read_text(path, max_bytes=MAX_SOURCE_BYTES), path)
    except documents.DocumentError as exc:
        raise SourceError(exc.problem) from None


def check_size(path: Path) -> None:
    """Refuse a source over :data:`MAX_SOURCE_BYTES` before reading any of it."""
    from benchdb.interop.writer import SourceError

    size = path.stat().st_size
    if size > MAX_SOURCE_BYTES:
        raise SourceError(
            f"{size / 2**20:,.0f} MiB, larger than the {MAX_SOURCE_BYTES // 2**20} MiB an import "
            "reads; import the tool's results in smaller files (one per run)"
        )


def load_json_lines(path: Path, what: str) -> list[tuple[int, Any]]:
    """(line number, document) of each non-blank line of a JSON-lines file, or a SourceError naming
    the line where it breaks (the last one: the file looks truncated)."""
    import json

    from benchdb.interop.writer import SourceError
    from benchdb.schema import documents

    try:
        lines = documents.read_text(path, max_bytes=MAX_SOURCE_BYTES).splitlines()
    except documents.DocumentError as exc:
        raise SourceError(f"{exc.problem} (expected {what})") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append((n, documents.check_depth(json.loads(line), path)))
        except json.JSONDecodeError as exc:
            end = " (the file looks truncated)" if n == len(lines) else ""
            raise SourceError(f"line {n} is not valid JSON: {exc.msg}{end}") from None
        except (RecursionError, documents.DocumentError):
            raise SourceError(f"line {n} is not readable JSON: {TOO_DEEP}") from None
        except ValueError as exc:  # a number past Python's digit limit
            raise SourceError(f"line {n} is not readable JSON ({clip(str(exc), 120)})") from None
    if not out:
        raise SourceError(f"empty file (expected {what})")
    return out


def find_sources(fmt: str, paths: list[str]) -> list[Path]:
    """Files given, and inside folders the files the format's tool writes (recursively)."""
    from benchdb.interop.writer import SourceError

    mod = module(fmt)
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            inside = sorted(f for pattern in mod.FILES for f in p.rglob(pattern) if f.is_file())
            # A format whose files come in sets (AIPerf: records + summary) or share names with
            # others (vLLM's .pytorch.json beside its results) picks its own in a folder.
            found += mod.select(inside) if hasattr(mod, "select") else inside
        elif p.is_file():
            found.append(p)
        else:
            raise SourceError(f"{p}: no such file or folder")
    if not found:
        raise SourceError(f"no {fmt} files ({', '.join(mod.FILES)}) under {', '.join(paths)}")
    return list(dict.fromkeys(found))


def import_files(fmt: str, paths: list[str], out: str | Path, declared: Declared | None = None) -> ImportSummary:
    """Convert every source file of ``fmt`` under ``paths`` into contract files under ``out``."""
    from benchdb.interop import writer
    from benchdb.interop.writer import SourceError

    if fmt not in formats.import_names():
        raise SourceError(f"unknown format {fmt!r}; choose one of {', '.join(formats.import_names())}")
    mod = module(fmt)
    if hasattr(mod, "import_paths"):  # a format whose files make sense only together (MLPerf repositories)
        result: ImportSummary = mod.import_paths(list(paths), Path(out), declared or Declared())
        return result
    summary = ImportSummary()
    for src in find_sources(fmt, paths):
        try:
            check_size(src)
            items = mod.parse(src)
            if not items:
                raise SourceError(f"no results in it (is it a {fmt} file?)")
            for item in items:
                (declared or Declared()).apply(item)
            planned = writer.plan_files(items, formats.importer(fmt).source, src, Path(out))
        except SourceError as exc:
            summary.failed.append((src, str(exc)))
            continue
        except RecursionError:  # a format's own walk over a deep document: that file's problem
            summary.failed.append((src, f"{TOO_DEEP}; is it a {fmt} file?"))
            continue
        except OSError as exc:
            summary.failed.append((src, f"cannot read it: {exc.strerror or exc}"))
            continue
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as exc:
            summary.failed.append(
                (src, f"unexpected content for {fmt} ({type(exc).__name__}: {clip(str(exc))}); is it a {fmt} file?")
            )
            continue
        summary.written += writer.write_all(planned)
        summary.imported.append((src, len(planned)))
    return summary


def import_results(
    fmt: str,
    paths: list[str],
    out: str | Path,
    *,
    hardware: str | None = None,
    hardware_file: str | None = None,
    engine: str | None = None,
    model: str | None = None,
    precision: str | None = None,
    mlperf_round: str | None = None,
) -> ImportSummary:
    """Convert other tools' result files into contract files: the Python API of `benchdb import`.

    ``fmt`` is a registered format (:data:`benchdb.interop.formats.IMPORTERS`), ``paths`` files or
    folders; ``hardware`` (a name) or ``hardware_file`` name the hardware where the files do not,
    ``engine`` the serving engine (as `benchdb import --engine` spells it), ``model`` and
    ``precision`` what a file leaves out, ``mlperf_round`` an MLPerf round (v4.1). Returns what was
    written and which files failed (with why); then ``Warehouse(db).ingest([out])`` loads them.
    """
    fingerprint, device, usage = declared_hardware(hardware, hardware_file)
    if engine:
        from benchdb.interop.serving_fields import engine_name

        engine = engine_name(engine) or engine.strip().lower()
    declared = Declared(fingerprint, device, engine, model, precision, usage, mlperf_round)
    return import_files(fmt, list(paths), out, declared)
