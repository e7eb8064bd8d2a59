"""benchdb.backends.ortweb.assets: onnxruntime-web's npm files, pinned and integrity-checked: a
tarball that fails its check installs nothing."""

from __future__ import annotations

import io
import tarfile

import pytest

from benchdb.backends.ortweb import assets
from benchdb.errors import BackendUnavailable


@pytest.mark.core
def test_a_tarball_that_fails_its_integrity_writes_nothing(tmp_path, monkeypatch):
    bad = tmp_path / "onnxruntime-web.tgz"
    with tarfile.open(bad, "w:gz") as tar:
        for name in assets.FILES:
            info = tarfile.TarInfo(f"package/dist/{name}")
            info.size = 3
            tar.addfile(info, io.BytesIO(b"bad"))
    monkeypatch.setenv("BENCHDB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHDB_ORTWEB_DIR", raising=False)
    with pytest.raises(BackendUnavailable, match="does not match its registry integrity"):
        assets.install(bad)
    assert not assets.folder().exists()
    assert assets.missing() == list(assets.FILES)
