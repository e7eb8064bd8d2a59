"""The `benchdb` commands a Markdown page shows and the check that each names a real command and only
options its --help shows: the README's (tests/guarantees/test_readme.py) and the docs' pages
(tests/guarantees/test_docs.py)."""

from __future__ import annotations

import re


def benchdb_commands(markdown: str) -> list[list[str]]:
    """Every `benchdb ...` command of a page's bash blocks, as words (comments and continuations joined)."""
    import shlex

    out = []
    for block in markdown.split("```bash\n")[1:]:
        text = block.split("```", 1)[0].replace("\\\n", " ")
        for line in text.splitlines():
            words = shlex.split(line, comments=True)
            for i, word in enumerate(words):
                if word.endswith("benchdb") and (i == 0 or words[i - 1] in ("&&", "|", ";")):
                    rest = words[i + 1 :]
                    for sep in ("&&", "|", ";"):
                        rest = rest[: rest.index(sep)] if sep in rest else rest
                    out.append(rest)
    return out


def check_commands(commands: list[list[str]]) -> None:
    """Each names a benchdb command, and only options its --help shows."""
    import click

    from benchdb.cli import main

    ctx = click.Context(main, info_name="benchdb")
    for words in commands:
        command: click.Command = main
        sub_ctx = ctx
        while isinstance(command, click.Group) and words and not words[0].startswith("-"):
            sub = command.get_command(sub_ctx, words[0])
            assert sub is not None, f"benchdb {' '.join(words)}: no command {words[0]!r}"
            sub_ctx = click.Context(sub, info_name=words[0], parent=sub_ctx)
            command, words = sub, words[1:]
        # an option the command's --help shows: old names kept as hidden aliases do not count
        shown = set(re.findall(r"--[a-z0-9-]+", command.get_help(sub_ctx)))
        for word in words:
            if word.startswith("--"):
                assert word.split("=", 1)[0] in shown, f"benchdb {command.name}: {word} is not in its --help"
