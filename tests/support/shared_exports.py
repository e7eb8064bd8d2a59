"""One $BENCHDB_CACHE for the test modules that export the same tiny models at the same shapes
(batch 1, the default seq len 128: tests/backends/test_shared_graph.py's sweep, test_ortweb.py's
runs, benchmarks/ortweb.py --small in tests/guarantees/test_benchmarks_small.py), so each of those
models is exported once a test session, not once a module.

Shared by the session's xdist workers too: a cache entry is written into a temporary folder and
moved into place (benchdb.backends.shared.onnx_export), so two workers exporting the same model at
once both succeed and one copy is kept. A test that must see a model exported (not served from the
cache) uses a shape of its own or a cache of its own. (A module of tests/support/, not a
tests/backends/conftest.py: a second conftest takes the name ``conftest`` from tests/conftest.py
for the modules that import it by name, and their collection fails.)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def folder(tmp_path_factory: pytest.TempPathFactory, name: str = "shared-export-cache") -> Path:
    """The session's shared export cache (or another folder ``name`` its workers share): under the
    folder all xdist workers' temporary folders share (this session's alone, so every session starts
    with an empty cache)."""
    base = tmp_path_factory.getbasetemp()
    path = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    path.mkdir(exist_ok=True)
    return path


@contextmanager
def used(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """$BENCHDB_CACHE set to :func:`folder` for the ``with`` block, then restored. onnxruntime-web's
    files are read where they were found (fetched into the shared cache where there were none)."""
    from benchdb.backends.ortweb import assets

    path = folder(tmp_path_factory)
    with pytest.MonkeyPatch.context() as mp:  # for module fixtures, which cannot take `monkeypatch`
        if not assets.missing():
            mp.setenv("BENCHDB_ORTWEB_DIR", str(assets.folder()))
        mp.setenv("BENCHDB_CACHE", str(path))
        yield path
