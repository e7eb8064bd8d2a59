"""benchdb's DuckDB SQL as Spark SQL, generated from the same .sql files (one source of truth).

sqlglot does most of the work (``read="duckdb"``); what it gets wrong for benchdb's SQL is fixed
here on the syntax tree, and anything without a faithful Spark form is an error naming it:

- macros (``CREATE MACRO``, scalar and table) are inlined: Spark has no macros;
- ``QUALIFY`` is kept (Spark 4 accepts it; sqlglot's spark dialect would rewrite it into a
  subquery with duplicate columns, which Spark rejects);
- ``list(x ORDER BY x)`` / ``list_sort(list(x))`` become ``array_sort(collect_list(x))``
  (sqlglot drops the ORDER BY); ``list(DISTINCT x ORDER BY x)`` -> ``array_sort(collect_set(x))``;
- 1-based list indexes ``s[i]`` (any expression) become ``try_element_at(s, i)`` (1-based, NULL
  out of range as in DuckDB); ``len(list)`` becomes ``size``;
- ``quantile_cont(x, q)`` -> ``percentile(x, q)``; ``map_extract_value`` -> ``try_element_at``;
  ``isinf`` -> ``abs(x) = Infinity``; ``MAP {}`` -> ``map()``;
- aggregate ``FILTER (WHERE c)`` inside a window -> the aggregate of ``CASE WHEN c THEN x END``;
- a division is ``try_divide`` (DuckDB gives NULL for x / 0; Spark's ANSI mode raises);
- report parameters ``$name`` become Spark named markers ``:name`` (bound by the caller); one
  used as a list is cast to ``ARRAY<STRING>`` so a NULL binds.

Type knowledge is limited to the syntax: ``len()`` is the list length only where its argument is
a list-valued expression or a column aliased from one (benchdb's SQL uses ``len`` for lists).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from benchdb import sql
from benchdb.spark.macros import Macro, inline_macros
from benchdb.spark.rewrite import UntranslatableSQL, rewrite


@dataclass(frozen=True)
class Statement:
    """One translated statement: a view (``kind='view'``, ``name`` its name) or a query."""

    kind: str
    name: str
    source: str  # the .sql file it comes from
    text: str  # Spark SQL


# ------------------------------------------------------------------ dialect


def _dialect():
    """sqlglot's Spark dialect with QUALIFY kept (Spark 4 runs it natively)."""
    from sqlglot import exp, transforms
    from sqlglot.dialects.spark import Spark

    class BenchdbSpark(Spark):
        # sqlglot's stubs declare Dialect.Generator as a variable (a class attribute set per
        # dialect), so mypy rejects it as a base class although it is a class at runtime.
        class Generator(Spark.Generator):  # type: ignore[valid-type, misc]
            TRANSFORMS = {
                **Spark.Generator.TRANSFORMS,
                exp.Select: transforms.preprocess(
                    [transforms.eliminate_distinct_on, transforms.unnest_to_explode, transforms.any_to_exists]
                ),
            }

    return BenchdbSpark


@lru_cache(maxsize=1)
def dialect():
    return _dialect()


# ------------------------------------------------------------------ statements


def _statements(text: str) -> list[str]:
    """The statements of a .sql file (split on top-level semicolons by sqlglot's tokenizer)."""
    from sqlglot.dialects.duckdb import DuckDB
    from sqlglot.tokens import TokenType

    out, start = [], 0
    for tok in DuckDB().tokenize(text):
        if tok.token_type == TokenType.SEMICOLON:
            out.append(text[start : tok.start])
            start = tok.end + 1
    out.append(text[start:])
    return [s for s in out if _strip_comments(s).strip()]


def _strip_comments(text: str) -> str:
    """``text`` without its ``--`` comments; a ``--`` inside a string literal is the string's."""
    return re.sub(r"('(?:[^']|'')*')|--[^\n]*", lambda m: m.group(1) or "", text)


_MACRO = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?MACRO\s+(\w+)\s*\(([^)]*)\)\s+AS\s+(TABLE\s+)?(.*)$", re.IGNORECASE | re.DOTALL
)


@lru_cache(maxsize=1)
def _reader():
    """DuckDB as sqlglot reads it, but with list indexes left as written (1-based): sqlglot's own
    shift to 0-based applies to literal offsets only, so computed indexes came out wrong."""
    from sqlglot.dialects.duckdb import DuckDB

    class DuckDB1(DuckDB):
        INDEX_OFFSET = 0

    return DuckDB1


def _parse(text: str, where: str):
    import sqlglot

    try:
        return sqlglot.parse_one(text, read=_reader())
    except sqlglot.errors.ParseError as exc:
        raise UntranslatableSQL(f"{where}: sqlglot cannot parse it ({str(exc).splitlines()[0]})") from None


def _macro(stmt: str, where: str) -> Macro | None:
    m = _MACRO.match(_strip_comments(stmt))
    if not m:
        return None
    name, params, table, body = m.groups()
    names = tuple(p.strip().lower() for p in params.split(",") if p.strip())
    return Macro(name.lower(), names, _parse(body, f"{where}: macro {name}"), bool(table))


@lru_cache(maxsize=1)
def macros() -> dict[str, Macro]:
    """Every macro benchdb defines: macros.sql and the table macros in the view files."""
    found: dict[str, Macro] = {}
    for name in ["macros.sql", *sql.view_files()]:
        for stmt in _statements(sql.load(name)):
            m = _macro(stmt, name)
            if m:
                found[m.name] = m
    return found


# ------------------------------------------------------------------ public API


def translate(text: str, where: str = "query") -> list[Statement]:
    """Spark SQL of the statements in ``text`` (DuckDB SQL as benchdb writes it): views become
    ``CREATE OR REPLACE TEMPORARY VIEW``, macros are inlined (and not emitted), queries stay queries."""
    from sqlglot import exp

    defs = macros()
    out: list[Statement] = []
    for stmt in _statements(text):
        if _macro(stmt, where):
            continue
        tree = _parse(stmt, where)
        if isinstance(tree, exp.Command):
            raise UntranslatableSQL(f"{where}: the statement {tree.name!r} ... is not a query or a view")
        kind, name = "query", where
        if isinstance(tree, exp.Create):
            if (tree.args.get("kind") or "").upper() != "VIEW":
                raise UntranslatableSQL(
                    f"{where}: CREATE {tree.args.get('kind')} is not translated (only views, queries and macros)"
                )
            name = tree.this.name
            body = tree.expression
            body = rewrite(inline_macros(body, defs, f"{where} ({name})"), f"{where} ({name})")
            text_ = f"CREATE OR REPLACE TEMPORARY VIEW {name} AS\n" + body.sql(dialect=dialect(), pretty=True)
            kind = "view"
        else:
            tree = rewrite(inline_macros(tree, defs, where), where)
            text_ = tree.sql(dialect=dialect(), pretty=True)
        out.append(Statement(kind, name, where, text_))
    return out


@lru_cache(maxsize=256)
def translate_query(text: str, where: str = "query") -> str:
    """One DuckDB query (benchdb's report SQL, ``$name`` parameters) as one Spark SQL query."""
    stmts = translate(text, where)
    if len(stmts) != 1 or stmts[0].kind != "query":
        raise UntranslatableSQL(f"{where}: expected one query, found {len(stmts)} statements")
    return stmts[0].text


def report_files() -> list[str]:
    return sorted(f"reports/{p.name}" for p in (sql.FOLDER / "reports").iterdir() if p.name.endswith(".sql"))


def views(skip: list | None = None) -> list[Statement]:
    """Every view of benchdb/sql/views/, in apply order, as Spark SQL. With ``skip`` (a list), a
    view that cannot be translated is left out and its error appended to ``skip`` instead of raised."""
    stmts, left = _views()
    if left and skip is None:
        raise UntranslatableSQL(left[0][1])
    if skip is not None:
        skip.extend(left)
    return list(stmts)


@lru_cache(maxsize=1)
def _views() -> tuple[tuple[Statement, ...], tuple[tuple[str, str], ...]]:
    """The translated views and the (view, reason) of those left out, translated once per process
    (sqlglot takes a second or two over every view file, and each register() needs them)."""
    from sqlglot import exp

    out: list[Statement] = []
    left: list[tuple[str, str]] = []
    for name in sql.view_files():
        for stmt in _statements(sql.load(name)):
            try:
                out.extend(translate(stmt, name))
            except UntranslatableSQL as exc:
                tree = _parse(stmt, name) if not _macro(stmt, name) else None
                view = tree.this.name if isinstance(tree, exp.Create) else name
                left.append((view, str(exc)))
    return tuple(out), tuple(left)


def reports() -> list[Statement]:
    """Every report query of benchdb/sql/reports/ as Spark SQL (``:name`` parameters)."""
    out = []
    for name in report_files():
        out.append(Statement("query", name, name, translate_query(sql.load(name), name)))
    return out


def script(skip: list | None = None) -> str:
    """What `benchdb sql --dialect spark` prints: the views, then every report query. Views that
    cannot be translated are left out and named in ``skip`` (or raised when it is None)."""
    parts = [
        "-- benchdb views and report queries, translated from DuckDB SQL to Spark SQL (Spark 4).",
        "-- Register the tables first (benchdb.spark.register, or temporary views over the",
        "-- `benchdb export --partitioned` files); report parameters are named markers (:name).",
        "",
    ]
    for s in views(skip):
        parts += [f"-- {s.source}: view {s.name}", s.text + ";", ""]
    for s in reports():
        parts += [f"-- {s.source}", s.text + ";", ""]
    return "\n".join(parts)
