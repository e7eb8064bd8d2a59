"""Finding a userbench spec's benches: the ``bench_*.py`` files of a path (or ``FILE::FUNCTION``),
each imported once per process under a private module name, and the ``bench_*`` functions each
defines, in definition order."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path
from types import ModuleType

from benchdb.errors import BenchdbError
from benchdb.harness.validity import error_text

SEP = "::"
FILE_PATTERN = re.compile(r"^bench_.*\.py$")
FUNCTION_PREFIX = "bench_"
SKIP_DIRS = {"__pycache__", "venv", "node_modules", "site-packages"}

#: The bench files imported in this process, by absolute path.
MODULES: dict[Path, ModuleType] = {}


def split_spec(spec: str) -> tuple[str, str | None]:
    if SEP in spec:
        path, _, name = spec.rpartition(SEP)
        return path, name
    return spec, None


def bench_files(folder: Path) -> list[Path]:
    """Every ``bench_*.py`` file under a folder, sorted, skipping hidden and tool folders."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        found += [Path(root) / f for f in files if FILE_PATTERN.match(f)]
    return sorted(found)


def load_module(path: Path) -> ModuleType:
    """Import a bench file (once per process) under a private module name."""
    path = path.resolve()
    if path in MODULES:
        return MODULES[path]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"_benchdb_bench_{stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    MODULES[path] = module
    return module


def _import_error(path: Path, exc: BaseException) -> BenchdbError:
    if isinstance(exc, SyntaxError):
        what = f"SyntaxError: {exc.msg} (line {exc.lineno})"
    else:
        what = error_text(exc)
    return BenchdbError(f"bench file {path} could not be imported: {what}")


def import_bench(path: Path) -> ModuleType:
    try:
        return load_module(path)
    except (Exception, SystemExit) as exc:
        raise _import_error(path, exc) from None


def bench_functions(module: ModuleType) -> list[str]:
    """Names of the ``bench_*`` functions defined in the module, in definition order."""
    return [
        n
        for n, v in vars(module).items()
        if n.startswith(FUNCTION_PREFIX) and inspect.isfunction(v) and v.__module__ == module.__name__
    ]


def discover(spec: str) -> list[tuple[Path, str]]:
    """(absolute file, function) of every bench a spec names; a one-line error when it names none."""
    text, name = split_spec(spec)
    path = Path(text).expanduser()
    if not path.exists():
        raise BenchdbError(f"bench path {text} does not exist")
    if path.is_dir():
        if name is not None:
            raise BenchdbError(f"bench {spec}: {text} is a folder; FILE::FUNCTION needs a .py file")
        files = bench_files(path)
        if not files:
            raise BenchdbError(f"bench folder {text} has no bench_*.py files")
    elif path.suffix != ".py":
        raise BenchdbError(f"bench file {text} is not a .py file")
    else:
        files = [path]
    found = []
    for f in files:
        f = f.resolve()
        names = bench_functions(import_bench(f))
        if not names:
            raise BenchdbError(f"bench file {f} has no benches; define functions named bench_*")
        if name is not None:
            if name not in names:
                raise BenchdbError(f"bench file {f} has no bench {name!r}; it has {', '.join(names)}")
            names = [name]
        found += [(f, n) for n in names]
    return found


def model_id(path: Path, name: str) -> str:
    return f"{Path(path).stem}{SEP}{name}"
