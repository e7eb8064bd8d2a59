"""The syntax-tree rewrites behind :mod:`benchdb.spark.translate` (its docstring lists them), each
fixing what sqlglot's Spark output gets wrong for benchdb's SQL; macros are inlined before them
(:mod:`benchdb.spark.macros`)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, NoReturn

from benchdb import sql
from benchdb.errors import BenchdbError

if TYPE_CHECKING:
    from sqlglot import exp


class UntranslatableSQL(BenchdbError):
    """A construct of benchdb's DuckDB SQL with no faithful Spark SQL form."""


def _list_aliases(tree) -> set[str]:
    """Names of columns aliased from list-valued expressions (after the list rewrites)."""
    from sqlglot import exp

    out = set()
    for alias in tree.find_all(exp.Alias):
        if _is_list(alias.this, set()):
            out.add(alias.alias.lower())
    for field in tree.find_all(exp.PropertyEQ):  # list-valued fields of a struct literal (g.sorted_values)
        if isinstance(field.parent, exp.Struct) and _is_list(field.expression, set()):
            out.add(field.this.name.lower())
    return out


def _is_list(node, aliases: set[str]) -> bool:
    from sqlglot import exp

    if isinstance(node, (exp.ArrayAgg, exp.ArraySort, exp.Array, exp.ArrayConcat)):
        return True
    if isinstance(node, exp.Anonymous) and node.name.lower() in (
        "collect_list",
        "collect_set",
        "array_sort",
        "list_sort",
        "array_distinct",
    ):
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

    from benchdb.store import database

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

    from benchdb.store import database

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
        new: list[exp.Expression] = []
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

    return exp.Case(
        ifs=[
            exp.If(
                this=exp.EQ(this=filt(exp.Count(this=exp.Star())), expression=exp.Literal.number(0)), true=exp.Null()
            )
        ],
        default=agg,
    )


def rewrite(tree, where: str):
    """The fixes on top of sqlglot's duckdb -> spark translation (see the module docstring)."""
    tree = _expand_stars(tree)
    _reject_correlated_order(tree, where)
    # 1. list aggregates (before anything looks at list-valued expressions)
    tree = tree.transform(lambda node: _repl_lists(node, where))
    aliases = _list_aliases(tree)
    for _ in range(50):  # to a fixed point: a replaced node's children are rewritten too
        before = tree.sql("duckdb")
        tree = tree.transform(lambda node: _repl(node, where, aliases))
        if tree.sql("duckdb") == before:
            break
    _unfilter_windows(tree)
    _type_list_params(tree)
    _reject_leftovers(tree, where)
    return tree


def _fail(where: str, what: str) -> NoReturn:
    raise UntranslatableSQL(
        f"{where}: {what} has no faithful Spark SQL form; rewrite it in benchdb/sql so both engines agree"
    )


def _list_agg(node, where: str, where_=None):
    """list(...) / array_agg(...) -> collect_list or array_sort(collect_list|collect_set);
    ``where_``: the aggregate's FILTER condition, applied to each aggregate it becomes."""
    from sqlglot import exp

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
            _fail(where, "list(DISTINCT a, b)")
        inner = inner.expressions[0]
    agg = filt(exp.Anonymous(this="collect_set" if distinct else "collect_list", expressions=[inner.copy()]))
    if order is None:
        if distinct:
            _fail(where, "list(DISTINCT x) without ORDER BY x (its order is undefined in both engines)")
        return _null_if_no_rows(agg, filt)
    keys = order.expressions
    desc = {bool(k.args.get("desc")) for k in keys}
    if len(desc) != 1:
        _fail(where, f"list(... ORDER BY {', '.join(k.sql('duckdb') for k in keys)}) with mixed directions")
    if len(keys) == 1 and keys[0].this == inner:
        sorted_ = exp.Anonymous(this="array_sort", expressions=[agg])
    else:
        # ordered by other keys: sort structs (keys first, then the value), keep the values
        if distinct:
            _fail(where, "list(DISTINCT x ORDER BY another expression)")
        fields = []
        for i, k in enumerate(keys):
            fields += [exp.Literal.string(f"k{i}"), k.this.copy()]
        fields += [exp.Literal.string("v"), inner.copy()]
        pairs = filt(
            exp.Anonymous(this="collect_list", expressions=[exp.Anonymous(this="named_struct", expressions=fields)])
        )
        sorted_ = exp.Anonymous(
            this="transform",
            expressions=[
                exp.Anonymous(this="array_sort", expressions=[pairs]),
                exp.Lambda(
                    this=exp.Dot(this=exp.column("e"), expression=exp.to_identifier("v")),
                    expressions=[exp.to_identifier("e")],
                ),
            ],
        )
    out = exp.Anonymous(this="reverse", expressions=[sorted_]) if desc.pop() else sorted_
    return _null_if_no_rows(out, filt)


def _reject_correlated_order(tree, where: str) -> None:
    """Spark cannot run a correlated subquery that orders or limits by the outer row."""
    from sqlglot import exp

    for sub in tree.find_all(exp.Subquery):
        q = sub.this
        if not isinstance(q, exp.Select) or isinstance(sub.parent, (exp.From, exp.Join, exp.CTE)):
            continue
        if not (q.args.get("order") or q.args.get("limit")):
            continue
        local = {t.alias_or_name for t in q.find_all(exp.Table)}
        outer = sorted({c.table for c in q.find_all(exp.Column) if c.table and c.table not in local})
        if outer:
            _fail(
                where,
                f"a correlated scalar subquery with ORDER BY/LIMIT (referencing {', '.join(outer)}: "
                f"{q.sql('duckdb')[:80]}...)",
            )


def _repl_lists(node, where: str):
    """The list aggregates and list_sort, as Spark spells them."""
    from sqlglot import exp

    if isinstance(node, exp.Filter) and isinstance(node.this, exp.ArrayAgg):
        return _list_agg(node.this, where, node.expression.this)
    if isinstance(node, exp.ArrayAgg):
        return _list_agg(node, where)
    if isinstance(node, exp.ArraySort):
        if node.expression is not None:
            _fail(where, "list_sort(x, order)")
        return exp.Anonymous(this="array_sort", expressions=[node.this])
    return node


def _repl(node, where: str, aliases: set[str]):
    """One node with the expression rewrites applied (list access and size, functions, literals)."""
    from sqlglot import exp

    if isinstance(node, exp.Bracket):
        return _element_at(node, where)
    if isinstance(node, exp.Length) and _is_list(node.this, aliases):
        return exp.Anonymous(this="size", expressions=[node.this])
    if isinstance(node, exp.PercentileCont):
        return exp.Anonymous(this="percentile", expressions=[node.this, node.expression])
    if isinstance(node, exp.IsInf):
        return exp.EQ(
            this=exp.Abs(this=node.this),
            expression=exp.Cast(this=exp.Literal.string("Infinity"), to=exp.DataType.build("DOUBLE")),
        )
    if isinstance(node, exp.Anonymous) and node.name.lower() == "isfinite" and len(node.expressions) == 1:
        x = node.expressions[0]
        return exp.And(this=exp.Not(this=exp.IsNan(this=x.copy())), expression=exp.Not(this=exp.IsInf(this=x.copy())))
    if isinstance(node, (exp.Map, exp.VarMap, exp.ToMap)):
        return _map_literal(node, where)
    if isinstance(node, exp.Case) and node.this is not None:
        # simple CASE x WHEN v -> searched CASE WHEN x = v (Spark's parser trips on CASE 'literal')
        subject = node.this
        ifs = [
            exp.If(this=exp.EQ(this=subject.copy(), expression=i.this.copy()), true=i.args["true"].copy())
            for i in node.args.get("ifs") or []
        ]
        return exp.Case(ifs=ifs, default=node.args.get("default"))
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("map_extract_value", "map_extract", "element_at"):
        return exp.Anonymous(this="try_element_at", expressions=list(node.expressions))
    if isinstance(node, exp.Div):
        return exp.Anonymous(this="try_divide", expressions=[node.this, node.expression])
    if isinstance(node, exp.Parameter):
        return exp.Placeholder(this=node.name)
    return node


def _element_at(node, where: str):
    """``x[i]`` (DuckDB's 1-based list index, or a map key) as try_element_at."""
    from sqlglot import exp

    if len(node.expressions) != 1 or isinstance(node.expressions[0], exp.Slice):
        _fail(where, f"the list slice {node.sql('duckdb')}")
    idx = node.expressions[0]
    if isinstance(idx, exp.Literal) and idx.is_string:
        return exp.Anonymous(this="try_element_at", expressions=[node.this, idx])
    # read without sqlglot's offset shift: idx is DuckDB's 1-based index, as element_at's
    # (which takes an INT)
    if not (isinstance(idx, exp.Literal) and idx.is_int):
        idx = exp.Cast(this=idx, to=exp.DataType.build("INT"))
    return exp.Anonymous(this="try_element_at", expressions=[node.this, idx])


def _map_literal(node, where: str):
    """An empty map literal as Spark's map(); any other map literal has no Spark form here."""
    from sqlglot import exp

    if isinstance(node, (exp.Map, exp.VarMap)):
        if not node.args.get("keys") and not node.args.get("values"):
            return exp.Anonymous(this="map", expressions=[])
        return node
    if isinstance(node.this, exp.Struct) and not node.this.expressions:
        return exp.Anonymous(this="map", expressions=[])
    _fail(where, f"the map literal {node.sql('duckdb')}")


def _unfilter_windows(tree) -> None:
    """FILTER inside a window: Spark refuses it; the aggregate of a CASE is the same."""
    from sqlglot import exp

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


def _type_list_params(tree) -> None:
    """Parameters used as lists: typed, so that NULL binds."""
    from sqlglot import exp

    for ph in list(tree.find_all(exp.Placeholder)):
        parent = ph.parent
        if isinstance(parent, exp.ArrayContains) and parent.this is ph:
            ph.replace(exp.Cast(this=ph.copy(), to=exp.DataType.build("ARRAY<STRING>", dialect="spark")))


def _reject_leftovers(tree, where: str) -> None:
    """DuckDB list and struct functions that no rewrite turned into Spark's."""
    from sqlglot import exp

    for node in tree.find_all(exp.Anonymous):
        if node.name.lower() in (
            "list",
            "array_agg",
            "quantile_cont",
            "quantile_disc",
            "list_slice",
            "list_element",
            "array_extract",
            "unnest",
            "struct_pack",
        ):
            _fail(where, f"{node.name}()")
