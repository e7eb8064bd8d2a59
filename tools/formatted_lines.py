"""Each module's line count as `ruff format` would leave it (the 400-line limit counts formatted lines).

python tools/formatted_lines.py [--over 400] [paths...]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def formatted_lines(path: Path) -> int:
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(path), "-"],
        input=path.read_bytes(),
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    return out.stdout.count(b"\n")


def main(argv: list[str]) -> int:
    over = 400
    if "--over" in argv:
        i = argv.index("--over")
        over = int(argv[i + 1])
        del argv[i : i + 2]
    paths = [Path(a) for a in argv] or sorted((ROOT / "benchdb").rglob("*.py"))
    found = [(formatted_lines(p), p) for p in paths]
    for n, p in sorted(found, reverse=True):
        if n > over:
            print(f"{n:5d} {p.relative_to(ROOT) if p.is_absolute() else p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
