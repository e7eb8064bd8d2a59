"""`benchdb publish --space ORG/NAME`: the dashboard's static site (`benchdb site`) as a static
Hugging Face Space, in one commit: the site's files, a README.md whose front matter makes it a
static Space, and the removal of files an earlier push left that the site no longer has."""

from __future__ import annotations

import json
from pathlib import Path

from benchdb.hub.client import api as make_api
from benchdb.hub.client import check_repo_id, hub_errors

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


def push(site: Path, space_id: str, *, private: bool = False) -> tuple[str | None, int, int]:
    """Upload ``site`` to ``space_id`` in one commit (creating the Space when new). Returns the
    commit URL, the files uploaded and the stale files removed."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    check_repo_id(space_id, "--space")
    hf = make_api()
    files = sorted(p for p in site.rglob("*") if p.is_file())
    ours = {p.relative_to(site).as_posix() for p in files} | {"README.md"}
    with hub_errors(space_id, "space", "creating"):
        hf.create_repo(space_id, repo_type="space", space_sdk="static", private=private, exist_ok=True)
    with hub_errors(space_id, "space", "reading"):
        there = set(hf.list_repo_files(space_id, repo_type="space"))
    stale = sorted(there - ours - {".gitattributes"})
    title = f"benchdb: {space_id.split('/')[1]}"
    card = CARD.format(title=title, quoted=json.dumps(title), space_id=space_id)     # JSON strings are YAML
    ops: list = [CommitOperationAdd("README.md", card.encode("utf-8"))]
    ops += [CommitOperationAdd(p.relative_to(site).as_posix(), str(p)) for p in files]
    ops += [CommitOperationDelete(path) for path in stale]
    with hub_errors(space_id, "space", "committing to"):
        info = hf.create_commit(space_id, ops, repo_type="space",
                                commit_message=f"benchdb publish --space: {len(files)} file(s) of the dashboard")
    return info.commit_url, len(files) + 1, len(stale)
