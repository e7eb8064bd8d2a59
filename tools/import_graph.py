"""The import graph of benchdb, read from the source with `ast` (deferred and type-only imports
included): each package's imports of other packages, and every cycle among packages and among
modules.

    python tools/import_graph.py            # package edges and cycles
    python tools/import_graph.py --modules  # module cycles too
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "benchdb"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of other benchdb modules (``from pkg import mod`` names the module)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        graph[name]
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_pkg else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            for t in targets:
                while t and t not in known:
                    t = t.rpartition(".")[0]
                if t and t.startswith("benchdb") and t != name:
                    graph[name].add(t)
    return graph


def package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for src, dsts in graph.items():
        out[package_of(src)]
        for d in dsts:
            if package_of(d) != package_of(src) and package_of(d) != "benchdb":
                out[package_of(src)].add(package_of(d))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main(argv: list[str]) -> int:
    graph = imports(modules())
    pkgs = package_graph(graph)
    for src in sorted(pkgs):
        print(f"{src} -> {', '.join(sorted(pkgs[src])) or '(nothing)'}")
    pc = cycles(pkgs)
    print(f"package cycles: {len(pc)}")
    for c in pc:
        print("  " + " <-> ".join(c))
    if "--modules" in argv:
        mc = cycles(graph)
        print(f"module cycles: {len(mc)}")
        for c in mc:
            print(f"  ({len(c)}) " + ", ".join(c))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
