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
from benchdb.errors import BenchdbError


class UntranslatableSQL(BenchdbError):
    """A construct of benchdb's DuckDB SQL with no faithful Spark SQL form."""


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: object            # sqlglot expression (a query for table macros)
    table: bool


@dataclass(frozen=True)
class Statement:
    """One translated statement: a view (``kind='view'``, ``name`` its name) or a query."""

    kind: str
    name: str
    source: str             # the .sql file it comes from
    text: str               # Spark SQL


# ------------------------------------------------------------------ dialect

def _dialect():
    """sqlglot's Spark dialect with QUALIFY kept (Spark 4 runs it natively)."""
    from sqlglot import exp, transforms
    from sqlglot.dialects.spark import Spark

    class BenchdbSpark(Spark):
        class Generator(Spark.Generator):
            TRANSFORMS = {
                **Spark.Generator.TRANSFORMS,
                exp.Select: transforms.preprocess([
                    transforms.eliminate_distinct_on,
                    transforms.unnest_to_explode,
                    transforms.any_to_exists,
                ]),
            }

    return BenchdbSpark


@lru_cache(maxsize=1)
def dialect():
    return _dialect()


# ------------------------------------------------------------------ statements

def _statements(text: str) -> list[str]:
    """The statements of a .sql file (split on top-level semicolons by sqlglot's tokenizer)."""
    from sqlglot.tokens import TokenType
    from sqlglot.dialects.duckdb import DuckDB

    out, start = [], 0
    for tok in DuckDB().tokenize(text):
        if tok.token_type == TokenType.SEMICOLON:
            out.append(text[start:tok.start])
            start = tok.end + 1
    out.append(text[start:])
    return [s for s in out if _strip_comments(s).strip()]


def _strip_comments(text: str) -> str:
    return re.sub(r"--[^\n]*", "", text)


_MACRO = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?MACRO\s+(\w+)\s*\(([^)]*)\)\s+AS\s+(TABLE\s+)?(.*)$",
                    re.IGNORECASE | re.DOTALL)


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


# ------------------------------------------------------------------ rewriting

def _inline(tree, defs: dict[str, Macro], where: str, depth: int = 0):
    """Replace macro calls by their bodies with the arguments substituted (recursively)."""
    from sqlglot import exp

    if depth > 20:
        raise UntranslatableSQL(f"{where}: macros nest more than 20 deep (a recursive macro?)")

    def substitute(m: Macro, call_args: list):
        if len(call_args) != len(m.params):
            raise UntranslatableSQL(f"{where}: macro {m.name} takes {len(m.params)} arguments, "
                                    f"got {len(call_args)}")
        mapping = dict(zip(m.params, call_args))
        body = m.body.copy()

        def repl(node):
            if isinstance(node, exp.Column) and not node.table and node.name.lower() in mapping:
                arg = mapping[node.name.lower()].copy()
                return arg if isinstance(arg, (exp.Literal, exp.Column, exp.Null, exp.Paren,
                                               exp.Placeholder, exp.Parameter, exp.Cast)) else exp.Paren(this=arg)
            return node

        body = body.transform(repl, copy=False)
        return _inline(body, defs, where, depth + 1)

    def repl_call(node):
        name = _func_name(node)
        if name and name in defs:
            m = defs[name]
            if m.table:
                parent = node.parent
                if not isinstance(parent, exp.Table):
                    raise UntranslatableSQL(f"{where}: table macro {m.name} used outside FROM")
                return node
            return substitute(m, _call_args(node))
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) \
                and node.this.name.lower() in defs and defs[node.this.name.lower()].table:
            m = defs[node.this.name.lower()]
            body = substitute(m, list(node.this.expressions))
            alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(m.name))
            return exp.Subquery(this=body, alias=alias.copy())
        return node

    return tree.transform(repl_call, copy=False)


def _func_name(node) -> str | None:
    from sqlglot import exp

    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return None


def _call_args(node) -> list:
    return list(node.expressions)


def _list_aliases(tree) -> set[str]:
    """Names of columns aliased from list-valued expressions (after the list rewrites)."""
    from sqlglot import exp

    out = set()
    for alias in tree.find_all(exp.Alias):
        if _is_list(alias.this, set()):
            out.add(alias.alias.lower())
    for field in tree.find_all(exp.PropertyEQ):      # list-valued fields of a struct literal (g.sorted_values)
        if isinstance(field.parent, exp.Struct) and _is_list(field.expression, set()):
            out.add(field.this.name.lower())
    return out


def _is_list(node, aliases: set[str]) -> bool:
    from sqlglot import exp

    if isinstance(node, (exp.ArrayAgg, exp.ArraySort, exp.Array, exp.ArrayConcat)):
        return True
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("collect_list", "collect_set", "array_sort",
                                                                 "list_sort", "array_distinct"):
        return True
    if isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.ARRAY):
        return True
    if isinstance(node, exp.Paren):
        return _is_list(node.this, aliases)
    if isinstance(node, exp.Coalesce):
        return any(_is_list(a, aliases) for a in [node.this, *node.expressions])
    return isinstance(node, exp.Column) and (node.name.lower() in aliases or node.name in list_columns())


@lru_cache(maxsize=1)
def table_columns() -> dict[str, list[str]]:
    """Columns of each warehouse table at the schema this code ships (an in-memory warehouse)."""
    from pathlib import Path

    import duckdb

    from benchdb.schema import database

    con = duckdb.connect()
    try:
        database.prepare(con, Path(":memory:"))
        out: dict[str, list[str]] = {}
        for table, column, _ in con.execute(sql.load("spark/table_columns.sql")).fetchall():
            out.setdefault(table, []).append(column)
        return out
    finally:
        con.close()


@lru_cache(maxsize=1)
def list_columns() -> frozenset[str]:
    """Names of the warehouse columns that hold lists (validity_reasons, tags, ...)."""
    from pathlib import Path

    import duckdb

    from benchdb.schema import database

    con = duckdb.connect()
    try:
        database.prepare(con, Path(":memory:"))
        rows = con.execute(sql.load("spark/table_columns.sql")).fetchall()
        return frozenset(c for _, c, t in rows if str(t).endswith("[]"))
    finally:
        con.close()


def _expand_stars(tree):
    """``alias.*`` of a warehouse table in a SELECT with a USING join, spelled out: Spark puts the
    USING keys first, DuckDB keeps the table's order."""
    from sqlglot import exp

    for select in list(tree.find_all(exp.Select)):
        if not any(j.args.get("using") for j in select.args.get("joins") or []):
            continue
        sources = {}
        for t in [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or []):
            if t is not None and isinstance(t.this, exp.Table):
                sources[t.this.alias_or_name] = t.this.name
        cols = None
        new = []
        for p in select.expressions:
            if isinstance(p, exp.Column) and isinstance(p.this, exp.Star) and p.table in sources:
                cols = cols or table_columns()
                table = sources[p.table]
                if table in cols:
                    new.extend(exp.column(c, table=p.table) for c in cols[table])
                    continue
            new.append(p)
        select.set("expressions", new)
    return tree


def _null_if_no_rows(agg, filt=lambda a: a):
    """DuckDB's list() over no rows is NULL; Spark's collect_list is an empty array."""
    from sqlglot import exp

    return exp.Case(ifs=[exp.If(this=exp.EQ(this=filt(exp.Count(this=exp.Star())), expression=exp.Literal.number(0)),
                                true=exp.Null())], default=agg)


def _rewrite(tree, where: str):
    """The fixes on top of sqlglot's duckdb -> spark translation (see the module docstring)."""
    from sqlglot import exp

    def fail(what: str):
        raise UntranslatableSQL(f"{where}: {what} has no faithful Spark SQL form; "
                                "rewrite it in benchdb/sql so both engines agree")

    def list_agg(node, where_=None):
        """list(...) / array_agg(...) -> collect_list or array_sort(collect_list|collect_set);
        ``where_``: the aggregate's FILTER condition, applied to each aggregate it becomes."""
        def filt(agg):
            return exp.Filter(this=agg, expression=exp.Where(this=where_.copy())) if where_ is not None else agg

        inner = node.this
        order = None
        if isinstance(inner, exp.Order):
            order = inner
            inner = inner.this
        distinct = isinstance(inner, exp.Distinct)
        if distinct:
            if len(inner.expressions) != 1:
                fail("list(DISTINCT a, b)")
            inner = inner.expressions[0]
        agg = filt(exp.Anonymous(this="collect_set" if distinct else "collect_list", expressions=[inner.copy()]))
        if order is None:
            if distinct:
                fail("list(DISTINCT x) without ORDER BY x (its order is undefined in both engines)")
            return _null_if_no_rows(agg, filt)
        keys = order.expressions
        desc = {bool(k.args.get("desc")) for k in keys}
        if len(desc) != 1:
            fail(f"list(... ORDER BY {', '.join(k.sql('duckdb') for k in keys)}) with mixed directions")
        if len(keys) == 1 and keys[0].this == inner:
            sorted_ = exp.Anonymous(this="array_sort", expressions=[agg])
        else:
            # ordered by other keys: sort structs (keys first, then the value), keep the values
            if distinct:
                fail("list(DISTINCT x ORDER BY another expression)")
            fields = []
            for i, k in enumerate(keys):
                fields += [exp.Literal.string(f"k{i}"), k.this.copy()]
            fields += [exp.Literal.string("v"), inner.copy()]
            pairs = filt(exp.Anonymous(this="collect_list", expressions=[exp.Anonymous(this="named_struct",
                                                                                      expressions=fields)]))
            sorted_ = exp.Anonymous(this="transform", expressions=[
                exp.Anonymous(this="array_sort", expressions=[pairs]),
                exp.Lambda(this=exp.Dot(this=exp.column("e"), expression=exp.to_identifier("v")),
                           expressions=[exp.to_identifier("e")])])
        out = exp.Anonymous(this="reverse", expressions=[sorted_]) if desc.pop() else sorted_
        return _null_if_no_rows(out, filt)

    tree = _expand_stars(tree)

    # 0. Spark cannot run a correlated subquery that orders or limits by the outer row
    for sub in tree.find_all(exp.Subquery):
        q = sub.this
        if not isinstance(q, exp.Select) or isinstance(sub.parent, (exp.From, exp.Join, exp.CTE)):
            continue
        if not (q.args.get("order") or q.args.get("limit")):
            continue
        local = {t.alias_or_name for t in q.find_all(exp.Table)}
        outer = sorted({c.table for c in q.find_all(exp.Column) if c.table and c.table not in local})
        if outer:
            fail(f"a correlated scalar subquery with ORDER BY/LIMIT (referencing {', '.join(outer)}: "
                 f"{q.sql('duckdb')[:80]}...)")

    # 1. list aggregates (before anything looks at list-valued expressions)
    def repl_lists(node):
        if isinstance(node, exp.Filter) and isinstance(node.this, exp.ArrayAgg):
            return list_agg(node.this, node.expression.this)
        if isinstance(node, exp.ArrayAgg):
            return list_agg(node)
        if isinstance(node, exp.ArraySort):
            if node.expression is not None:
                fail("list_sort(x, order)")
            this = node.this
            if isinstance(this, exp.Anonymous) and this.name.lower() == "collect_list":
                return exp.Anonymous(this="array_sort", expressions=[this])
            return exp.Anonymous(this="array_sort", expressions=[this])
        return node

    tree = tree.transform(repl_lists)
    aliases = _list_aliases(tree)

    def repl(node):
        if isinstance(node, exp.Bracket):
            if len(node.expressions) != 1 or isinstance(node.expressions[0], exp.Slice):
                fail(f"the list slice {node.sql('duckdb')}")
            idx = node.expressions[0]
            if isinstance(idx, exp.Literal) and idx.is_string:
                return exp.Anonymous(this="try_element_at", expressions=[node.this, idx])
            # read without sqlglot's offset shift: idx is DuckDB's 1-based index, as element_at's
            # (which takes an INT)
            if not (isinstance(idx, exp.Literal) and idx.is_int):
                idx = exp.Cast(this=idx, to=exp.DataType.build("INT"))
            return exp.Anonymous(this="try_element_at", expressions=[node.this, idx])
        if isinstance(node, exp.Length) and _is_list(node.this, aliases):
            return exp.Anonymous(this="size", expressions=[node.this])
        if isinstance(node, exp.PercentileCont):
            return exp.Anonymous(this="percentile", expressions=[node.this, node.expression])
        if isinstance(node, exp.IsInf):
            return exp.EQ(this=exp.Abs(this=node.this),
                          expression=exp.Cast(this=exp.Literal.string("Infinity"), to=exp.DataType.build("DOUBLE")))
        if isinstance(node, exp.Anonymous) and node.name.lower() == "isfinite" and len(node.expressions) == 1:
            x = node.expressions[0]
            return exp.And(this=exp.Not(this=exp.IsNan(this=x.copy())),
                           expression=exp.Not(this=exp.IsInf(this=x.copy())))
        if isinstance(node, (exp.Map, exp.VarMap)) and not node.args.get("keys") and not node.args.get("values"):
            return exp.Anonymous(this="map", expressions=[])
        if isinstance(node, exp.ToMap):
            if isinstance(node.this, exp.Struct) and not node.this.expressions:
                return exp.Anonymous(this="map", expressions=[])
            fail(f"the map literal {node.sql('duckdb')}")
        if isinstance(node, exp.Case) and node.this is not None:
            # simple CASE x WHEN v -> searched CASE WHEN x = v (Spark's parser trips on CASE 'literal')
            subject = node.this
            ifs = [exp.If(this=exp.EQ(this=subject.copy(), expression=i.this.copy()), true=i.args["true"].copy())
                   for i in node.args.get("ifs") or []]
            return exp.Case(ifs=ifs, default=node.args.get("default"))
        if isinstance(node, exp.Anonymous) and node.name.lower() in ("map_extract_value", "map_extract", "element_at"):
            return exp.Anonymous(this="try_element_at", expressions=list(node.expressions))
        if isinstance(node, exp.Div):
            return exp.Anonymous(this="try_divide", expressions=[node.this, node.expression])
        if isinstance(node, exp.Parameter):
            return exp.Placeholder(this=node.name)
        return node

    for _ in range(50):          # to a fixed point: a replaced node's children are rewritten too
        before = tree.sql("duckdb")
        tree = tree.transform(repl)
        if tree.sql("duckdb") == before:
            break

    # 2. FILTER inside a window: Spark refuses it; the aggregate of a CASE is the same.
    for win in list(tree.find_all(exp.Window)):
        f = win.this
        if isinstance(f, exp.Filter):
            agg, cond = f.this, f.expression.this
            agg = agg.copy()
            if isinstance(agg, exp.Count) and isinstance(agg.this, exp.Star):
                agg.set("this", exp.Case(ifs=[exp.If(this=cond.copy(), true=exp.Literal.number(1))]))
            else:
                agg.set("this", exp.Case(ifs=[exp.If(this=cond.copy(), true=agg.this.copy())]))
            win.set("this", agg)

    # 3. parameters used as lists: typed, so that NULL binds
    for ph in list(tree.find_all(exp.Placeholder)):
        parent = ph.parent
        if isinstance(parent, exp.ArrayContains) and parent.this is ph:
            ph.replace(exp.Cast(this=ph.copy(), to=exp.DataType.build("ARRAY<STRING>", dialect="spark")))

    for node in tree.find_all(exp.Anonymous):
        if node.name.lower() in ("list", "array_agg", "quantile_cont", "quantile_disc", "list_slice",
                                 "list_element", "array_extract", "unnest", "struct_pack"):
            fail(f"{node.name}()")
    return tree


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
                raise UntranslatableSQL(f"{where}: CREATE {tree.args.get('kind')} is not translated "
                                        "(only views, queries and macros)")
            name = tree.this.name
            body = tree.expression
            body = _rewrite(_inline(body, defs, f"{where} ({name})"), f"{where} ({name})")
            text_ = f"CREATE OR REPLACE TEMPORARY VIEW {name} AS\n" + body.sql(dialect=dialect(), pretty=True)
            kind = "view"
        else:
            tree = _rewrite(_inline(tree, defs, where), where)
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
    from sqlglot import exp

    out: list[Statement] = []
    for name in sql.view_files():
        for stmt in _statements(sql.load(name)):
            try:
                out.extend(translate(stmt, name))
            except UntranslatableSQL as exc:
                if skip is None:
                    raise
                tree = _parse(stmt, name) if not _macro(stmt, name) else None
                view = tree.this.name if isinstance(tree, exp.Create) else name
                skip.append((view, str(exc)))
    return out


def reports() -> list[Statement]:
    """Every report query of benchdb/sql/reports/ as Spark SQL (``:name`` parameters)."""
    out = []
    for name in report_files():
        out.append(Statement("query", name, name, translate_query(sql.load(name), name)))
    return out


def script(skip: list | None = None) -> str:
    """What `benchdb sql --dialect spark` prints: the views, then every report query. Views that
    cannot be translated are left out and named in ``skip`` (or raised when it is None)."""
    parts = ["-- benchdb views and report queries, translated from DuckDB SQL to Spark SQL (Spark 4).",
             "-- Register the tables first (benchdb.spark.register, or temporary views over the",
             "-- `benchdb export --partitioned` files); report parameters are named markers (:name).", ""]
    for s in views(skip):
        parts += [f"-- {s.source}: view {s.name}", s.text + ";", ""]
    for s in reports():
        parts += [f"-- {s.source}", s.text + ";", ""]
    return "\n".join(parts)
