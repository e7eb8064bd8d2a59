"""benchdb's SQL macros (``CREATE MACRO``) inlined into a syntax tree, for Spark SQL, which has none:
each call replaced by the macro's body with the arguments substituted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchdb.spark.rewrite import UntranslatableSQL

if TYPE_CHECKING:
    from sqlglot import exp


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: exp.Expression  # a query for table macros
    table: bool


def inline_macros(tree, defs: dict[str, Macro], where: str, depth: int = 0):
    """Replace macro calls by their bodies with the arguments substituted (recursively)."""
    from sqlglot import exp

    if depth > 20:
        raise UntranslatableSQL(f"{where}: macros nest more than 20 deep (a recursive macro?)")

    def substitute(m: Macro, call_args: list):
        if len(call_args) != len(m.params):
            raise UntranslatableSQL(f"{where}: macro {m.name} takes {len(m.params)} arguments, got {len(call_args)}")
        mapping = dict(zip(m.params, call_args, strict=True))  # lengths checked above
        body = m.body.copy()

        def repl(node):
            if isinstance(node, exp.Column) and not node.table and node.name.lower() in mapping:
                arg = mapping[node.name.lower()].copy()
                return (
                    arg
                    if isinstance(
                        arg, (exp.Literal, exp.Column, exp.Null, exp.Paren, exp.Placeholder, exp.Parameter, exp.Cast)
                    )
                    else exp.Paren(this=arg)
                )
            return node

        body = body.transform(repl, copy=False)
        return inline_macros(body, defs, where, depth + 1)

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
        if (
            isinstance(node, exp.Table)
            and isinstance(node.this, exp.Anonymous)
            and node.this.name.lower() in defs
            and defs[node.this.name.lower()].table
        ):
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
