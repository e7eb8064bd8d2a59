"""The docs site builds with no warnings, and its CLI reference is generated from the commands."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys

import click
import pytest
from conftest import REPO, need_module

need_module("mkdocs", "benchdb[docs]")
need_module("material", "benchdb[docs]: mkdocs-material")


def test_mkdocs_build_strict_and_generated_cli_reference(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(REPO / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stdout + proc.stderr

    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    from benchdb.cli import main

    ctx = click.Context(main, info_name="benchdb")
    names = [n for n in main.list_commands(ctx) if not main.get_command(ctx, n).hidden]
    assert {"run", "ingest", "report", "check", "query"} <= set(names)
    for name in names:
        assert f'id="benchdb-{name}"' in page, name  # a section per command
        assert f"Usage: benchdb {name} [OPTIONS]" in text, name  # holding its own --help
    run_section = text.split("Usage: benchdb run [OPTIONS]", 1)[1].split("Usage: benchdb ", 1)[0]
    assert "--batch-size" in run_section and "--batch-sizes" not in run_section  # old name: unlisted
    assert "Usage: benchdb db status [OPTIONS]" in text  # subcommands of a group too
    # nothing hand-written stands in for it
    assert not (REPO / "docs" / "reference" / "cli.md").exists()

    # the config reference's option table comes from the declarations: every one has its row
    from benchdb.backends import core_options as options

    config = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference" / "config" / "index.html").read_text("utf-8")))
    assert "<!-- run-options -->" not in config
    for opt, _ in options.every():
        assert opt.cli_flag in config, opt.name

    # the contract reference's field tables come from the contract's code: every field has its row
    from benchdb.schema import contract, metadata

    page = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference" / "contract" / "index.html").read_text("utf-8")))
    assert "<!-- contract-fields -->" not in page
    for name, _ in (*contract.KEY_FIELDS, *contract.SAMPLE_FIELDS):
        assert f"\n{name}\n" in page, name
    for path in _metadata_paths(metadata.Metadata):
        assert f"\n{path}\n" in page, path

    # the CLI reference is wrapped to its box: click's wrapped text (the options) fits 80 columns
    options = run_section.split("Options:", 1)[1].split("Examples:", 1)[0]
    long_lines = [line for line in options.splitlines() if len(line) > 80]
    assert not long_lines, long_lines


def _metadata_paths(model, prefix=""):
    """Every field path of the contract's metadata document (nested models walked)."""
    import typing

    out = []
    for name, field in model.model_fields.items():
        out.append(prefix + name)
        args = typing.get_args(field.annotation) or (field.annotation,)
        for arg in (*args, *(a for x in args for a in typing.get_args(x))):
            if isinstance(arg, type) and hasattr(arg, "model_fields"):
                out += _metadata_paths(arg, f"{prefix}{name}.")
    return out


def test_contract_reference_fails_on_an_undocumented_field(monkeypatch):
    """A field with no description stops the docs build instead of shipping a blank row."""
    sys.path.insert(0, str(REPO / "docs" / "hooks"))
    try:
        import contract_reference
    finally:
        sys.path.remove(str(REPO / "docs" / "hooks"))
    columns, meta = contract_reference.rows(str(REPO))
    assert all(row[3] for row in columns + meta)
    monkeypatch.delitem(contract_reference.DESCRIPTIONS, "hardware.device_name")
    with pytest.raises(ValueError, match="hardware.device_name"):
        contract_reference.rows(str(REPO))


def test_every_guide_is_in_the_nav_and_on_the_home_page_and_opens_with_a_command():
    import yaml

    guides = sorted(p.name for p in (REPO / "docs" / "guides").glob("*.md"))
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    listed = [page for section in nav if "Guides" in section for entry in section["Guides"] for page in entry.values()]
    assert sorted(p.removeprefix("guides/") for p in listed) == guides
    home = (REPO / "docs" / "index.md").read_text()
    for name in guides:
        assert f"(guides/{name})" in home, name
        text = (REPO / "docs" / "guides" / name).read_text()
        opening = "\n".join(text.splitlines()[:25])
        assert "```bash\n" in opening, f"{name}: no command in its first 25 lines"


def test_no_page_speaks_of_this_vm_or_internal_versions():
    for page in (REPO / "docs").rglob("*.md"):
        if page.name == "benchmarks.md":  # measurements of benchdb itself, with their machines
            continue
        text = page.read_text()
        for phrase in ("this VM", "this 2-core VM", "contract v2", "(contract v", "schema 7", "before schema"):
            assert phrase not in text, f"{page.relative_to(REPO)}: {phrase!r}"
        if "guides" in page.parts:  # examples a reader copies: no scratch paths of ours
            assert "/tmp/" not in text, page.name


def test_every_docs_command_names_a_real_command_and_real_options():
    from support.doc_commands import benchdb_commands, check_commands

    commands = [c for page in (REPO / "docs").rglob("*.md") for c in benchdb_commands(page.read_text())]
    assert len(commands) >= 40
    check_commands(commands)
