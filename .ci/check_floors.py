"""The floors CI tests (.ci/floors.txt) are the floors pyproject.toml declares: same names, same
versions, one for each `>=` floor of the core dependencies and of the `test` extra."""

import re
import sys
from pathlib import Path

import tomllib

root = Path(__file__).resolve().parents[1]
project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
declared = {}
for req in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)", req.strip())
    if not m:
        sys.exit(f"check_floors: {req!r} in pyproject.toml is not NAME>=VERSION")
    declared[m[1].lower()] = m[2]
pinned = {}
for line in (root / ".ci" / "floors.txt").read_text().splitlines():
    line = line.split("#", 1)[0].strip()
    if line:
        name, _, version = line.partition("==")
        pinned[name.strip().lower()] = version.strip()
if declared != pinned:
    diff = sorted(
        f"{n}: pyproject >={declared.get(n)}, floors.txt =={pinned.get(n)}"
        for n in declared.keys() | pinned.keys()
        if declared.get(n) != pinned.get(n)
    )
    sys.exit("check_floors: .ci/floors.txt and pyproject.toml disagree:\n  " + "\n  ".join(diff))
print(f"check_floors: {len(pinned)} floors agree with pyproject.toml")
