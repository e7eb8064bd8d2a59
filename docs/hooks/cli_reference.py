"""MkDocs hook: writes the CLI reference page (reference/cli.md) from the commands' own help, and
the run options' table of reference/config.md from their declarations.

Configured in mkdocs.yml (``hooks:``). On every build it walks the click group
``benchdb.cli:main`` -- every command and, recursively, every subcommand of a group -- and adds
the page to the build as a generated file, so the reference cannot drift from ``benchdb --help``
and nothing hand-written is committed for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from mkdocs.structure.files import File

PAGE = "reference/cli.md"
#: Columns the help is wrapped to: the docs theme's code box holds about 88 without scrolling.
WIDTH = 80

INTRO = """\
# CLI reference

Generated at build time from the commands' own `--help` (`docs/hooks/cli_reference.py`), so it
always matches the installed `benchdb`. `--db` defaults to `$BENCHDB_DB`, else
`./benchdb.duckdb`. Errors you can cause (a bad file, a bad option, a missing backend, a
database newer than this benchdb) end in one line naming the thing and what to do, with a
non-zero exit; `benchdb --debug ...` shows the traceback.
"""


def _walk(command: click.Command, ctx: click.Context, depth: int) -> list[str]:
    path = ctx.command_path
    parts = [f"{'#' * depth} `{path}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):  # benchdb's group registers its commands here
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            parts += _walk(
                sub, click.Context(sub, info_name=name, parent=ctx, **sub.context_settings), min(depth + 1, 6)
            )
    return parts


def markdown(root: str | None = None) -> str:
    """The page's Markdown; ``root``, the checkout's folder, goes first on sys.path so the page
    documents this checkout's commands even where another benchdb is installed."""
    if root and root not in sys.path:
        sys.path.insert(0, root)
    from benchdb.cli import main

    settings = {**main.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(main, info_name="benchdb", **settings)
    names = main.list_commands(ctx)
    toc = ["Commands: " + ", ".join(f"`{n}`" for n in names) + ".", ""]
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)  # for any help text that measures the terminal itself
    try:
        return INTRO + "\n" + "\n".join(toc + _walk(main, ctx, 2))
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def options_table() -> str:
    """Every declared run option (core, then each backend's own) as a Markdown table."""
    from benchdb.backends import core_options as options

    kinds = {
        "int": "integer",
        "float": "number",
        "str": "string",
        "bool": "true / false",
        "words": "list of strings",
        "ints": "list of integers",
        **{k: f"{forms} (benchdb.parsing)" for k, forms in options.QUANTITIES.items()},
    }
    rows = ["| key | values | `benchdb run` | default | backend | what |", "|---|---|---|---|---|---|"]
    for opt, owners in options.every():
        keys = " / ".join(f"`{k}`" for k in (opt.config_key, *opt.aliases))
        flag = f"`{opt.cli_flag}`" + (" (as `false`)" if opt.negate else "")
        default = opt.default
        if isinstance(default, tuple):
            default = ",".join(map(str, default))
        elif opt.kind in options.QUANTITIES and default is not None:
            default = options.quantity_text(opt, default)
        shown = f"`{default}`" if default not in (None, "") else ""
        what = opt.help.replace("|", "\\|") + (" Part of the scenario's identity." if opt.identity else "")
        axis = "axis: " if opt.axis else ""
        rows.append(f"| {keys} | {axis}{kinds[opt.kind]} | {flag} | {shown} | {', '.join(owners) or 'all'} | {what} |")
    return "\n".join(rows)


def on_page_markdown(markdown_text, page, config, files):
    if page.file.src_uri == "reference/config.md":
        return markdown_text.replace("<!-- run-options -->", options_table())
    return markdown_text


def on_files(files, config):
    files.append(File.generated(config, PAGE, content=markdown(str(Path(config.config_file_path).parent))))
    return files
