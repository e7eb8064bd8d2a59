"""A change point as the start of a bisect: the change point found by (a prefix of) its id, and the
run options its scenario gives (what ``benchdb bisect --change-point`` measures at each commit)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.schema import identity
from benchdb.warehouse import Warehouse


def find(db: str | None, prefix: str, *, wait_s: float) -> dict[str, Any]:
    """The change point whose id starts with ``prefix``, with its scenario and the commits either
    side of it; refused when none or several match, or when a side recorded no commit."""
    with Warehouse(db, wait_s=wait_s).reading() as con:
        rows = sql.rows(con.execute(sql.load("queries/bisect_change_point.sql"), {"prefix": prefix}))
    if not rows:
        raise BenchdbError(f"no change point {prefix!r}; `benchdb report --regressions` lists them")
    if len({r["change_id"] for r in rows}) > 1:
        raise BenchdbError(f"change point id {prefix!r} is ambiguous; give more of it")
    cp = rows[0]
    for key, what in (("bad_commit", "its first run after the shift"), ("good_commit", "a run before it")):
        if not cp[key]:
            raise BenchdbError(
                f"change point {cp['change_id'][:12]}: {what} recorded no git commit; bisect with --good REV --bad REV"
            )
    return cp


def run_options(cp: dict[str, Any], repo: Path) -> dict[str, Any]:
    """The ``benchdb run`` parameters of the change point's scenario: its backend and model (or
    bench, as a path inside ``repo``), device, threads and, but for a user bench (which declares
    its own axes), batch size, mode, precision and sequence length."""
    settings = json.loads(cp["settings"]) if isinstance(cp["settings"], str) else (cp["settings"] or {})
    out: dict[str, Any] = {}
    if cp["backend"] == "userbench":
        out["benches"] = (bench_in_repo(str(settings.get("bench") or ""), repo, cp["model_id"]),)
    else:
        out["backend"], out["models"] = cp["backend"], (cp["model_id"],)
    out.update(device=cp["device"], threads=cp["threads"])
    if cp["backend"] != "userbench":
        out.update(batch_sizes=(cp["batch_size"],), modes=(cp["mode"],), precisions=(cp["precision"],))
        seq_len = identity.shape_fields(cp["input_shape"]).get("seq_len", "")
        if seq_len.isdigit():
            out["seq_lens"] = (int(seq_len),)
    return out


def bench_in_repo(spec: str, repo: Path, model_id: str) -> str:
    """A recorded bench (an absolute FILE::FUNCTION where it ran) as a path inside the repository."""
    path, sep, fn = spec.partition("::")
    if not path:
        raise BenchdbError(f"the change point's bench {model_id} recorded no file; give --bench PATH")
    p = Path(path)
    top = (
        subprocess.run(
            ["git", "-C", str(p.parent), "rev-parse", "--show-toplevel"], capture_output=True, text=True
        ).stdout.strip()
        if p.parent.is_dir()
        else ""
    )
    if top:
        rel = p.resolve().relative_to(Path(top).resolve())
    elif p.is_relative_to(repo):
        rel = p.relative_to(repo)
    else:
        raise BenchdbError(
            f"the change point's bench file {path} is gone and not inside {repo}; give --bench "
            "PATH (relative to the repository)"
        )
    return f"{rel}{sep}{fn}"
