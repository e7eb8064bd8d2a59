"""What a published MLPerf table says against itself: each row's platform name against its own
accelerator and host-processor counts, its accelerator counts against each other, and its accuracy
string against the form the other rows of its benchmark use.

MLCommons' tables are typed by hand in places. In v6.1's ``summary.json`` a platform named
``8xMI355X_2xEPYC_9575F`` gives ``host_processors_per_node`` 8 (its MI350X sibling says 2), and one
wan-2.2 row writes its accuracy as a bare number where the others write ``vbench_score: 70.12``.
Nothing here picks a side: each disagreement is a line naming the row, both values and where each
came from, printed by the import and kept with the run (``source_disagreements``).
"""

from __future__ import annotations

import re
from collections import defaultdict

from benchdb.interop.mlperf.tables import Row, Table

#: A platform-name token giving a count: ``8xMI355X``, ``9x8xMI355X`` (nodes x per node) or the older
#: suffix form ``H100-SXM-80GBx8``.
_PREFIX = re.compile(r"^(\d+)x(?:(\d+)x)?([A-Za-z][\w.-]*)$")
_SUFFIX = re.compile(r"^([A-Za-z][\w.-]*?)x(\d+)$")
#: An accuracy string in the checker's form: ``vbench_score: 70.1221`` (one or more metrics).
_NAMED = re.compile(r"^\s*[A-Za-z][\w.]*\s*:\s*[-+]?\d")
_BARE = re.compile(r"^\s*[-+]?\d+(\.\d+)?([eE][-+]?\d+)?\s*$")


def _count_tokens(platform: str) -> list[tuple[int | None, int, str]]:
    """(nodes or None, count, name) for each counting token of a platform name, in order."""
    out = []
    for token in platform.split("_"):
        m = _PREFIX.match(token)
        if m:
            nodes = int(m.group(1)) if m.group(2) else None
            out.append((nodes, int(m.group(2) or m.group(1)), m.group(3)))
            continue
        m = _SUFFIX.match(token)
        if m:
            out.append((None, int(m.group(2)), m.group(1)))
    return out


def _names(name: str, described: str | None) -> bool:
    """Whether a platform token's ``name`` (``MI355X``, ``H100-SXM-80GB``, ``EPYC``) is the thing
    ``described`` (``AMD Instinct MI355X 288GB HBM3e``): its first word of 3+ characters appears there."""
    if not described:
        return False
    word = next((w for w in re.split(r"[^A-Za-z0-9]+", name) if len(w) >= 3), None)
    return word is not None and word.lower() in described.lower()


def row_problems(row: Row) -> list[str]:
    """One row's disagreements with itself."""
    out = []
    product = row.per_node * row.nodes if row.per_node is not None and row.nodes is not None else None
    total = row.total_accelerators if row.total_accelerators is not None else product
    if row.total_accelerators is not None and product is not None and product != row.total_accelerators:
        out.append(
            f"total_accelerators {row.total_accelerators}, but accelerators per node {row.per_node} x "
            f"nodes {row.nodes} = {product}"
        )
    tokens = _count_tokens(row.platform or "")
    # a heterogeneous system names two kinds of accelerator (16xMI325X_8xMI300X_...): no one count
    kinds = [t for t in tokens if not _names(t[2], row.host_cpu)]
    acc = next((t for t in kinds if _names(t[2], row.accelerator)), None) if len(kinds) == 1 else None
    if acc is not None:
        nodes, n, name = acc
        if nodes is not None:
            agree = (nodes, n) == (row.nodes, row.per_node) or (total is not None and nodes * n == total)
            says = f"{nodes} x {n} {name}"
        else:
            agree = n in {row.per_node, total}
            says = f"{n} {name}"
        if not agree and (row.per_node is not None or total is not None):
            out.append(
                f"platform name {row.platform!r} says {says}; the row gives {row.per_node} per node, "
                f"{row.nodes} node(s), {total if total is not None else 'no'} in total"
            )
    cpu = next((t for t in tokens if t is not acc and _names(t[2], row.host_cpu)), None)
    if cpu is not None and row.host_cpus_per_node is not None and cpu[1] != row.host_cpus_per_node:
        out.append(
            f"platform name {row.platform!r} says {cpu[1]} {cpu[2]} processor(s) per node; "
            f"host_processors_per_node is {row.host_cpus_per_node}"
        )
    return out


def table_problems(table: Table) -> dict[str, list[str]]:
    """Each row's disagreements within ``table`` (its own fields, and its accuracy string against
    the form the table's other rows of the benchmark use), keyed by Location."""
    out: dict[str, list[str]] = defaultdict(list)
    named: dict[str, str] = {}
    for row in table.rows.values():
        if row.accuracy and _NAMED.match(row.accuracy):
            named.setdefault(row.model, row.accuracy)
    for location, row in table.rows.items():
        out[location] += row_problems(row)
        example = named.get(row.model)
        if row.accuracy and example and _BARE.match(row.accuracy):
            out[location].append(f"accuracy {row.accuracy!r} names no metric; other {row.model} rows write {example!r}")
    return {loc: lines for loc, lines in out.items() if lines}
