"""`benchdb publish --space ORG/NAME`: the dashboard's static site (`benchdb site`) as a static
Hugging Face Space, in one commit: the site's files, a README.md whose front matter makes it a
static Space, and :data:`MANIFEST`, the list of files this publish wrote.

A publish touches only its own files. It uploads what `benchdb site` wrote (the files its marker
lists, never a dotfile, a link or anything else in the folder), and it deletes only files that the
previous publish's manifest names and the site no longer has: a Space's own ``app.py`` or model
weights stay where they are. It replaces a file of the Space that no publish wrote (the README.md and
index.html the Hub puts in a new static Space) only when told to (``replace_existing``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from benchdb.errors import BenchdbError
from benchdb.hub.client import api as make_api
from benchdb.hub.client import check_repo_id, hub_errors
from benchdb.paths import inside

#: In the Space: the files benchdb's last publish wrote (the only ones a later publish may delete).
MANIFEST = ".benchdb-publish.json"
MANIFEST_FORMAT = "benchdb-space"
#: Files of a Space that a publish neither writes nor deletes.
KEEP = {".gitattributes"}

CARD = """---
title: {quoted}
emoji: 📊
colorFrom: blue
colorTo: gray
sdk: static
app_file: index.html
pinned: false
---

# {title}

benchdb's dashboard of a benchmark warehouse, as static files (`benchdb site`): latest runs, change
points, the compatibility matrix, optimal hardware, series histories and raw samples. Published with
`benchdb publish --space {space_id}`.
"""


@dataclass
class SpacePlan:
    space_id: str
    exists: bool
    parent: str | None  # the Space's head commit the push builds on
    uploads: dict[str, Path | bytes] = field(default_factory=dict)  # path in the Space -> content
    deletions: list[str] = field(default_factory=list)  # written by the previous publish, gone from the site
    replaced: list[str] = field(default_factory=list)  # in the Space, not written by a publish, overwritten
    ignored: list[str] = field(default_factory=list)  # in the site folder, not written by `benchdb site`

    def size(self, path: str) -> int:
        data = self.uploads[path]
        return len(data) if isinstance(data, bytes) else data.stat().st_size

    def replaced_text(self) -> str:
        """The files a push would replace that no publish wrote, for a line ("README.md, index.html")."""
        more = len(self.replaced) - 5
        return ", ".join(self.replaced[:5]) + (f" and {more} more" if more > 0 else "")

    def lines(self) -> list[str]:
        """Every upload and deletion, one line each (what --dry-run shows and a push prints)."""
        out = [
            f"  + {p} ({self.size(p):,} bytes)" + ("  (replaces a file no publish wrote)" if p in self.replaced else "")
            for p in sorted(self.uploads)
        ]
        out += [f"  - {p} (an earlier publish wrote it; the site no longer has it)" for p in self.deletions]
        if self.ignored:
            more = len(self.ignored) - 5
            shown = ", ".join(self.ignored[:5]) + (f" and {more} more" if more > 0 else "")
            out.append(f"  not uploaded ({len(self.ignored)} file(s) `benchdb site` did not write): {shown}")
        return out


def site_files(site: Path) -> tuple[dict[str, Path], list[str]]:
    """The files of ``site`` to upload (what `benchdb site` wrote and still there, as regular files
    inside the folder) and the rest of the folder's files, which are not uploaded."""
    from benchdb.file_lists import MARKER, all_files, listed_files

    listed = listed_files(site)
    if listed is None:
        raise BenchdbError(
            f"--site {site} is not a site `benchdb site` wrote (no readable {MARKER}): "
            "build one with `benchdb site --out DIR`, or leave --site out"
        )
    files: dict[str, Path] = {}
    for rel in listed:
        path = site / rel
        if (
            any(part.startswith(".") or part == "" for part in rel.split("/"))
            or path.is_symlink()
            or not path.is_file()
        ):
            continue
        try:
            inside(site, path)  # no link to a folder outside the site on the way
        except BenchdbError:
            continue
        files[rel] = path
    ignored = [rel for rel in all_files(site) if rel not in files and rel != MARKER]
    return files, ignored


def plan(site: Path, space_id: str, *, need_token: bool = True) -> SpacePlan:
    """What publishing ``site`` to ``space_id`` would upload and delete (reads the Space only)."""
    from huggingface_hub.errors import RepositoryNotFoundError

    check_repo_id(space_id, "--space")
    files, ignored = site_files(site)
    hf = make_api(need_token=need_token)
    with hub_errors(space_id, "space", "reading"):
        try:
            info = hf.space_info(space_id)
            there = set(hf.list_repo_files(space_id, repo_type="space", revision=info.sha))
            parent, exists = info.sha, True
        except RepositoryNotFoundError:
            there, parent, exists = set(), None, False
        previous = _manifest(hf, space_id, parent) if MANIFEST in there else set()
    title = f"benchdb: {space_id.split('/')[1]}"
    card = CARD.format(title=title, quoted=json.dumps(title), space_id=space_id)  # JSON strings are YAML
    uploads: dict[str, Path | bytes] = {"README.md": card.encode("utf-8"), **files}
    ours = sorted(uploads)
    uploads[MANIFEST] = json.dumps({"format": MANIFEST_FORMAT, "version": 1, "files": ours}, indent=1).encode()
    return SpacePlan(
        space_id,
        exists,
        parent,
        uploads,
        deletions=sorted((previous & there) - set(uploads) - KEEP),
        replaced=sorted((there & set(ours)) - previous - KEEP),
        ignored=ignored,
    )


def push(p: SpacePlan, *, private: bool = False, replace_existing: bool = False) -> str:
    """Upload the plan in one commit on top of the Space's head as planned (creating the Space
    when new); refused, nothing sent, where it would replace a file no publish wrote and
    ``replace_existing`` is not given. Returns the commit URL."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    if p.replaced and not replace_existing:
        raise BenchdbError(
            f"Space {p.space_id} has {len(p.replaced)} file(s) that no benchdb publish wrote and this one "
            f"would replace: {p.replaced_text()}; give --replace-existing to replace them (--dry-run lists "
            "every file), or publish to another Space"
        )
    hf = make_api()
    if not p.exists:
        with hub_errors(p.space_id, "space", "creating"):
            hf.create_repo(p.space_id, repo_type="space", space_sdk="static", private=private, exist_ok=True)
    ops: list = [
        CommitOperationAdd(path, data if isinstance(data, bytes) else str(data))
        for path, data in sorted(p.uploads.items())
    ]
    ops += [CommitOperationDelete(path) for path in p.deletions]
    with hub_errors(p.space_id, "space", "committing to"):
        info = hf.create_commit(
            p.space_id,
            ops,
            repo_type="space",
            parent_commit=p.parent,
            commit_message=f"benchdb publish --space: {len(p.uploads)} file(s) of the dashboard",
        )
    return info.commit_url


def _manifest(hf, space_id: str, revision: str | None) -> set[str]:
    """The files the previous publish wrote, from its manifest (an unreadable one names none)."""
    from benchdb.file_lists import file_list

    path = hf.hf_hub_download(space_id, MANIFEST, repo_type="space", revision=revision)
    return set(file_list(Path(path), MANIFEST_FORMAT) or ())
