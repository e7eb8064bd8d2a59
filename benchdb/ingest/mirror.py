"""Remote results: copy the contract files under an fsspec URL into a local mirror."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from benchdb.errors import BenchdbError


def mirror(url: str) -> Path:
    """Copy the contract files under an fsspec URL into a local mirror (unchanged files are not
    downloaded again) and return the mirror folder. Remote files are only read."""
    try:
        import fsspec
    except ImportError:
        raise BenchdbError(f"{url} needs fsspec: pip install fsspec (plus s3fs / gcsfs for those URLs)") from None
    try:
        fs, root = fsspec.core.url_to_fs(url)
        found = [p for p in fs.find(root) if p.endswith(".parquet") and not Path(p).name.startswith(".")]
    except (ImportError, ValueError, OSError) as exc:
        raise BenchdbError(f"cannot list {url}: {exc}") from None
    base = Path(os.environ.get("BENCHDB_CACHE") or Path.home() / ".cache" / "benchdb") / "remote"
    mirror = base / hashlib.sha256(url.encode()).hexdigest()[:16]
    for remote in found:
        local = mirror / os.path.relpath(remote, root)
        size = fs.size(remote)
        if local.exists() and local.stat().st_size == size:
            continue
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(f".{local.name}.{os.getpid()}.tmp")
        fs.get_file(remote, str(tmp))
        os.replace(tmp, local)
    return mirror
