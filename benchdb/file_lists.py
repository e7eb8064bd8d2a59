"""The lists of files benchdb wrote into a folder: a static site's marker (what `benchdb site`
wrote, so that a later site replaces only its own files) and a Hub Space's manifest (what a
publish uploaded). The site builder and the Space publisher both read them; neither imports the
other."""

from __future__ import annotations

import json
import os
from pathlib import Path

#: Written last into a site: what it is and every file it holds (what `publish --space --site` uploads).
MARKER = ".benchdb-site.json"


def listed_files(folder: Path) -> list[str] | None:
    """The files a site lists in its :data:`MARKER` (relative, ``/``-separated); None when the
    folder is not a site `benchdb site` wrote."""
    return file_list(folder / MARKER, "benchdb-site")


def file_list(path: Path, fmt: str) -> list[str] | None:
    """The ``files`` a JSON list of what benchdb wrote (a site's marker, a Space's manifest) names;
    None when ``path`` is no readable list of format ``fmt``."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != fmt or not isinstance(doc.get("files"), list):
        return None
    return [f for f in doc["files"] if isinstance(f, str)]


def all_files(folder: Path) -> list[str]:
    """Every file and link under ``folder`` (links to folders not followed), relative and sorted."""
    found = []
    for top, dirs, names in os.walk(folder):
        rel = Path(top).relative_to(folder)
        found += [(rel / n).as_posix() for n in names]
        found += [(rel / d).as_posix() for d in dirs if (Path(top) / d).is_symlink()]
    return sorted(found)
