"""``benchdb publish``: the warehouse's results as a Hub dataset, pushed in one commit.

What a publish adds to the dataset repository (paths in :mod:`benchdb.hub.card`):

- ``samples/hardware=<hardware_id>/run=<run_id>/<sha256[:16]>.parquet``: each ingested contract
  file, byte for byte (so ``benchdb ingest hf://datasets/ORG/NAME`` rebuilds the same results), named
  by its content: a file already on the Hub is never uploaded again;
- ``.results/hardware=<hardware_id>/results-<digest>.parquet``: one row per scenario of the new
  contract files (the ``results`` table with hardware and run), for the Hub's viewer; hidden, so
  ingest skips it;
- ``README.md`` (the dataset card) and ``badges/<model>.json`` / ``.svg``, when they changed.

Everything goes in one commit (``create_commit``), or nothing does.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.hub import badges as badge_mod
from benchdb.hub import card
from benchdb.hub.client import HubError, check_repo_id, hub_errors
from benchdb.hub.client import api as make_api
from benchdb.paths import is_safe_name


@dataclass(frozen=True)
class Upload:
    path_in_repo: str
    kind: str  # samples | results | card | badge
    size: int
    source: Any  # a local Path (contract file) or bytes (generated)


@dataclass
class Plan:
    repo_id: str
    exists: bool  # the dataset repository is already on the Hub
    parent: str | None  # its head commit (the push commits on top of exactly that)
    uploads: list[Upload] = field(default_factory=list)
    already: int = 0  # contract files already on the Hub
    new_results: int = 0

    def count(self, kind: str) -> int:
        return sum(u.kind == kind for u in self.uploads)

    def line(self) -> str:
        size = sum(u.size for u in self.uploads)
        return (
            f"{len(self.uploads)} file(s), {size:,} bytes: {self.count('samples')} contract file(s) "
            f"({self.new_results} result(s)), {self.count('results')} results file(s), "
            f"{self.count('card')} card, {self.count('badge')} badge file(s); "
            f"{self.already} contract file(s) already there"
        )


def blob_oid(data: bytes) -> str:
    """Git's blob id of ``data``: what the Hub reports for a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def plan(
    db: str | os.PathLike | None,
    repo_id: str,
    *,
    models: list[str] | None = None,
    hardware: list[str] | None = None,
    need_token: bool = True,
) -> Plan:
    """What a publish of the warehouse ``db`` to dataset ``repo_id`` would upload (read-only)."""
    from benchdb.warehouse import Warehouse

    check_repo_id(repo_id)
    hf = make_api(need_token=need_token)
    remote, parent, exists = _remote(hf, repo_id)
    with Warehouse(db, wait_s=30).reading() as con:
        params = {"models": models or None, "hardware": hardware or None}
        files = con.execute(sql.load("hub/files.sql"), params).fetchall()
        if not files:
            what = " matching --model/--hardware" if models or hardware else ""
            raise BenchdbError(
                f"nothing to publish: no ingested contract file{what} in {Warehouse(db).path}; "
                "run `benchdb ingest RESULTS` first",
                exit_code=1,
            )
        out = Plan(repo_id, exists, parent)
        new_by_hw: dict[str, list[tuple]] = {}
        for file_id, path, sha, size, run_id, hw_id, _model in files:
            if not (is_safe_name(run_id) and is_safe_name(hw_id)):  # ingested before ingest checked them
                raise HubError(
                    f"run id {run_id!r} of {path} cannot name a folder in the dataset: leave its "
                    "results out with --model/--hardware"
                )
            repo_path = f"{card.SAMPLES_DIR}/hardware={hw_id}/run={run_id}/{sha[:16]}.parquet"
            if repo_path in remote:
                out.already += 1
                continue
            _check_local(Path(path), sha, size)
            out.uploads.append(Upload(repo_path, "samples", size, Path(path)))
            new_by_hw.setdefault(hw_id, []).append((file_id, sha))
        for hw_id, new in sorted(new_by_hw.items()):
            data, n = _results_parquet(con, [f for f, _ in new])
            digest = hashlib.sha256("".join(sorted(s for _, s in new)).encode()).hexdigest()[:16]
            out.uploads.append(
                Upload(f"{card.RESULTS_DIR}/hardware={hw_id}/results-{digest}.parquet", "results", len(data), data)
            )
            out.new_results += n
        made = badge_mod.badges(con, params["models"], params["hardware"])
        generated = [(f"{card.BADGES_DIR}/{b.slug}.json", "badge", b.endpoint_json()) for b in made]
        generated += [(f"{card.BADGES_DIR}/{b.slug}.svg", "badge", b.svg()) for b in made]
        columns = [d[0] for d in con.execute(sql.load("hub/results.sql"), {"file_ids": []}).description]
        counts = {
            "files": len(files),
            "results": len(files),
            "models": len({f[6] for f in files}),
            "hardware": len({f[5] for f in files}),
        }
        generated.append(
            (
                "README.md",
                "card",
                card.dataset_card(con, repo_id, columns, params["models"], params["hardware"], made, counts),
            )
        )
    for path_in_repo, kind, text in generated:
        data = text.encode("utf-8")
        if remote.get(path_in_repo) != blob_oid(data):
            out.uploads.append(Upload(path_in_repo, kind, len(data), data))
    return out


def push(p: Plan, *, private: bool = False) -> str | None:
    """Upload the plan's files in one commit (creating the repository when it is new). Returns the
    commit's URL, or None when there was nothing to upload."""
    if not p.uploads:
        return None
    from huggingface_hub import CommitOperationAdd

    hf = make_api()
    kind = "dataset"
    ops = [
        CommitOperationAdd(
            path_in_repo=u.path_in_repo, path_or_fileobj=str(u.source) if isinstance(u.source, Path) else u.source
        )
        for u in p.uploads
    ]
    message = (
        f"benchdb publish: {p.count('samples')} contract file(s), {p.new_results} result(s)"
        if p.count("samples")
        else "benchdb publish: card and badges"
    )
    with hub_errors(p.repo_id, kind, "creating"):
        if not p.exists:
            hf.create_repo(p.repo_id, repo_type=kind, private=private, exist_ok=True)
    with hub_errors(p.repo_id, kind, "committing to"):
        info = hf.create_commit(
            p.repo_id, ops, repo_type=kind, commit_message=message, parent_commit=p.parent if p.exists else None
        )
    return info.commit_url


def push_model_card(model_id: str, section: str) -> str | None:
    """Open a pull request on model repo ``model_id`` whose only change is the benchdb section of
    its README.md (between the markers; appended when absent). None when it is already current."""
    import tempfile

    from huggingface_hub import CommitOperationAdd

    check_repo_id(model_id, "model")
    hf = make_api()
    current = ""
    with hub_errors(model_id, "model", "reading the model card of"):
        hf.model_info(model_id)  # a missing repo: one line, not a new card
        if hf.file_exists(model_id, "README.md"):
            with tempfile.TemporaryDirectory() as tmp:
                local = hf.hf_hub_download(model_id, "README.md", repo_type="model", local_dir=tmp)
                current = Path(local).read_text(encoding="utf-8")
    updated = card.replace_section(current, section)
    if updated == current:
        return None
    with hub_errors(model_id, "model", "opening a pull request on"):
        info = hf.create_commit(
            model_id,
            [CommitOperationAdd("README.md", updated.encode("utf-8"))],
            repo_type="model",
            create_pr=True,
            commit_message="Update the inference benchmarks section (benchdb)",
            commit_description=f"Updates only the part of the model card between `{card.START}` and `{card.END}`.",
        )
    return info.pr_url


def model_card(db: str | os.PathLike | None, model_id: str, dataset: str | None) -> str:
    """The model-card section for ``model_id`` from the warehouse ``db``."""
    from benchdb.warehouse import Warehouse

    if dataset:
        check_repo_id(dataset, "--dataset")
    with Warehouse(db, wait_s=30).reading() as con:
        made = {b.model_id: b for b in badge_mod.badges(con, [model_id], None)}
        return card.model_card_section(con, model_id, dataset, made.get(model_id))


# ---------------------------------------------------------------------------------------------- helpers
def _remote(hf, repo_id: str) -> tuple[dict[str, str], str | None, bool]:
    """Files on the Hub (path -> blob id), the head commit, and whether the repository exists."""
    from huggingface_hub.errors import RepositoryNotFoundError

    with hub_errors(repo_id, "dataset", "listing"):
        try:
            info = hf.dataset_info(repo_id)
            tree = hf.list_repo_tree(repo_id, repo_type="dataset", recursive=True, revision=info.sha)
            return {f.path: f.blob_id for f in tree if hasattr(f, "blob_id")}, info.sha, True
        except RepositoryNotFoundError:
            return {}, None, False


def _check_local(path: Path, sha: str, size: int) -> None:
    """The contract file is still on disk, unchanged since it was ingested."""
    try:
        actual_size = path.stat().st_size
    except OSError:
        raise HubError(
            f"contract file {path} was ingested but is gone: restore it (or re-run and re-ingest), "
            "or leave its results out with --model/--hardware"
        ) from None
    h = hashlib.sha256()
    if actual_size == size:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    if actual_size != size or h.hexdigest() != sha:
        raise HubError(
            f"contract file {path} changed since it was ingested (its SHA-256 differs): "
            "restore the original, or leave its results out with --model/--hardware"
        )


def _results_parquet(con, file_ids: list[int]) -> tuple[bytes, int]:
    import duckdb  # noqa: F401  # the relation API (con.sql) is the package's Python layer, set up on import
    import pyarrow.parquet as pq

    rel = con.sql(sql.load("hub/results.sql"), params={"file_ids": file_ids})
    table = (getattr(rel, "to_arrow_table", None) or rel.arrow)()  # duckdb 2 / 1.x
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue(), table.num_rows
