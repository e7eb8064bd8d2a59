"""The Jinja templates of the Hub's cards and badges (``benchdb/hub/templates/``)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2


@cache
def _env() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FunctionLoader(source),
        autoescape=jinja2.select_autoescape(["svg.j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def source(name: str) -> str:
    return resources.files("benchdb.hub").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def template(name: str) -> jinja2.Template:
    return _env().get_template(name)
