"""A folder of user bench files for the userbench tests (tests/backends/test_userbench.py and
test_userbench_discovery.py): two found by name, one explicit-only, hidden and tool folders."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def bench_folder(tmp_path: Path) -> Path:
    """A folder of bench files: two found by name, one explicit-only, hidden and tool folders."""
    root = tmp_path / "benches"
    write(
        root / "helpers.py",
        """
        def bench_imported():
            return 0
    """,
    )
    write(
        root / "bench_a.py",
        """
        from benchdb import bench
        from helpers import bench_imported      # imported, not defined here: not a bench

        def helper():
            return 1

        @bench.params(n=[64, 128], dtype=["float32"], batch_size=[1, 4])
        def bench_zeta(n, dtype, batch_size):
            data = list(range(n * batch_size))
            return lambda: sum(data)

        def bench_alpha():
            return sum(range(10))

        bench_not_a_function = 3
    """,
    )
    write(
        root / "sub" / "bench_b.py",
        """
        from benchdb import bench

        @bench.params(precision=["bf16"], k=[3], mode=["x"])
        def bench_b(precision, k, mode):
            return k
    """,
    )
    write(root / "other.py", "def bench_other():\n    return 1\n")
    write(root / ".hidden" / "bench_hidden.py", "def bench_h():\n    return 1\n")
    write(root / "venv" / "bench_venv.py", "def bench_v():\n    return 1\n")
    return root
