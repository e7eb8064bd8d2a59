"""Remote results: copy the contract files under an fsspec URL into a local mirror."""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import Path

from benchdb.errors import BenchdbError
from benchdb.paths import atomic_path, cache_root, hidden, inside


def mirror(url: str) -> Path:
    """Copy the contract files under an fsspec URL into a local mirror (unchanged files are not
    downloaded again) and return the mirror folder. Remote files are only read."""
    try:
        import fsspec
    except ImportError:
        raise BenchdbError(f"{url} needs fsspec: pip install fsspec (plus s3fs / gcsfs for those URLs)") from None
    try:
        fs, root = fsspec.core.url_to_fs(url)
        found = [p for p in fs.find(root) if p.endswith(".parquet") and not hidden(Path(p).name)]
    except (ImportError, ValueError, OSError) as exc:
        raise BenchdbError(f"cannot list {url}: {exc}") from None
    base = cache_root() / "remote"
    mirror = base / hashlib.sha256(url.encode()).hexdigest()[:16]
    for remote in found:
        rel = _safe_key(url, root, remote)
        local = mirror / rel
        inside(mirror, local)  # a key checked above, and no link in the mirror leads out of it
        info = fs.info(remote)
        tag = _version_tag(info)
        stamp = local.with_name(f".{local.name}.version")
        if (
            local.exists()
            and local.stat().st_size == info.get("size")
            and tag is not None
            and stamp.is_file()
            and stamp.read_text(encoding="utf-8") == tag
        ):
            continue
        local.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(local) as tmp:
            fs.get_file(remote, str(tmp))
        if tag is not None:
            stamp.write_text(tag, encoding="utf-8")
        else:
            stamp.unlink(missing_ok=True)
    return mirror


def _safe_key(url: str, root: str, remote: str) -> str:
    """The remote file's path below the listed root, refused when it could leave the mirror."""
    rel = posixpath.relpath(remote, root) if remote.startswith(root.rstrip("/") + "/") or not root else None
    if rel is None or rel.startswith("/") or any(part in ("..", "") for part in rel.split("/")):
        raise BenchdbError(
            f"{url}: refusing remote key {remote!r}: it is absolute or contains '..' and would be "
            "written outside benchdb's mirror; rename it on the remote"
        )
    return rel


def _version_tag(info: dict) -> str | None:
    """What names one version of a remote file: its ETag, checksum or modification time (with size).
    None when the remote names none: then the file is always fetched again."""
    for key in (
        "ETag",
        "etag",
        "md5",
        "checksum",
        "sha256",
        "crc32c",
        "mtime",
        "LastModified",
        "last_modified",
        "updated",
        "created",
    ):
        if info.get(key) not in (None, ""):
            return f"{key}={info[key]}:size={info.get('size')}"
    return None
