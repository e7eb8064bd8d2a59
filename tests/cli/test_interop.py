"""`benchdb import` and `benchdb export` offer exactly the registered formats
(:mod:`benchdb.interop.formats`), and their help names each with what it reads or writes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchdb.cli import interop as commands
from benchdb.cli import main
from benchdb.interop import formats

pytestmark = pytest.mark.core


def _choices(command) -> tuple[str, ...]:
    return tuple(next(p for p in command.params if p.name == "fmt").type.choices)


def test_the_choices_are_the_registry():
    assert _choices(commands.import_cmd) == formats.import_names()
    assert _choices(commands.export_cmd) == formats.export_names()


def test_the_help_names_every_format_with_its_files():
    for entry in formats.IMPORTERS:
        assert f"{entry.name} ({entry.reads})" in commands.import_cmd.help, entry.name
    option = next(p for p in commands.export_cmd.params if p.name == "fmt")
    for out in formats.EXPORTERS:
        assert f"{out.name}: {out.writes}" in option.help, out.name
    shown = CliRunner().invoke(main, ["import", "--help"]).output
    assert "FORMAT: optimum-benchmark (benchmark.json" in shown and "llm-d (an llm-d Benchmark" in " ".join(
        shown.split()
    )


def test_export_without_a_format_names_every_registered_one(tmp_path):
    r = CliRunner().invoke(main, ["export", "--db", str(tmp_path / "w.duckdb")])
    assert r.exit_code == 2
    assert "give --format hud-v3, optimum-benchmark, vllm-serve or llm-d (or --partitioned DIR)" in r.output
