"""Command start-up: what `benchdb --help` and each reading command import.

Times are not asserted (benchmarks/report.py measures them); the imports that cost them are."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
from conftest import ENGINE, STARTUP_PROBE, imported_modules, make_meta, make_run, write_file

pytestmark = pytest.mark.core

HEAVY = ("torch", "onnxruntime", "openvino", "matplotlib", "pyspark", "transformers")


def test_help_and_import_load_nothing_heavy():
    mods = imported_modules("--help")
    assert not mods & set(HEAVY + ("duckdb", "_duckdb", "numpy", "pyarrow", "jinja2", "sqlglot", "pydantic"))
    code = "import benchdb.cli, sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not {m.split(".")[0] for m in json.loads(out.stdout)} & set(HEAVY + ("duckdb", "jinja2", "numpy"))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    from benchdb.ingest import ingest

    tmp = tmp_path_factory.mktemp("startup")
    (tmp / "r").mkdir()
    for label in ("a", "b"):
        run = make_run(started_at=f"2026-11-0{1 if label == 'a' else 2}T10:00:00+00:00")
        write_file(tmp / "r", make_meta(run, batch_size=1), name=f"{label}.parquet")
    ingest([tmp / "r"], tmp / "w.duckdb")
    # what a warehouse of this benchdb should hold is built once per code version and cached (by
    # any earlier command); build it here, so the commands below are timed as they usually run
    from benchdb.store import migrate

    migrate.expected()
    return str(tmp / "w.duckdb")


@pytest.mark.parametrize(
    "args,allowed",
    [
        (["report", "--optimal-hardware"], {"jinja2"}),
        (["query", "SELECT count(*) FROM results"], set()),
        (["check", "--baseline", "latest~1", "--candidate", "latest"], {"jinja2", "numpy"}),
    ],
)
def test_reading_commands_import_only_what_they_use(warehouse, args, allowed):
    mods = imported_modules(*args, "--db", warehouse)
    assert ENGINE in mods  # the command did run, on DuckDB's engine alone
    # where it can be had: not the duckdb package's Python layer (~100 ms of imports)
    unused = set(HEAVY + ("duckdb", "numpy", "pyarrow", "jinja2", "sqlglot", "pydantic", "yaml", "psutil")) - allowed
    if ENGINE == "duckdb":
        unused.discard("duckdb")
    assert not mods & unused, sorted(mods & unused)
    # other command modules are not imported to run one command
    assert not {m for m in ("benchdb.cli.run", "benchdb.cli.interop", "benchdb.cli.perfmodel")} & _submodules(*args)


def _submodules(*args: str) -> set[str]:
    code = STARTUP_PROBE.replace("m.split('.')[0] for m in sys.modules", "m for m in sys.modules")
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(list(args) + ["--help"])], capture_output=True, text=True, timeout=120
    )
    return set(json.loads(out.stdout.splitlines()[-1].removeprefix("MODULES=")))


def test_command_table_names_where_each_command_lives():
    from benchdb import cli

    for module in cli.MODULES:
        for command in importlib.import_module(f"benchdb.cli.{module}").COMMANDS:
            assert cli.WHERE.get(command.name, module) == module, command.name
    for name, module in cli.WHERE.items():
        assert name in {c.name for c in importlib.import_module(f"benchdb.cli.{module}").COMMANDS}, name


def test_help_lists_every_command():
    from click.testing import CliRunner

    from benchdb import cli

    out = CliRunner().invoke(cli.main, ["--help"]).output
    for module in cli.MODULES:
        for command in importlib.import_module(f"benchdb.cli.{module}").COMMANDS:
            assert (f"  {command.name} " in out) != command.hidden, command.name  # a former name: unlisted


def test_writable_connections_can_scan_arrow_without_importing_duckdb_first(tmp_path):
    """Readers use DuckDB's engine alone (benchdb.startup); a writer registers Arrow tables (ingest,
    migrations), which only works once the duckdb package has set up its Arrow scans."""
    code = (
        "import sys, pyarrow as pa\n"
        "from benchdb.store import database\n"
        f"assert {ENGINE!r} == 'duckdb' or 'duckdb' not in sys.modules\n"
        f"con, _ = database.open_writable({str(tmp_path / 'w.duckdb')!r})\n"
        "con.register('t', pa.table({'a': [1, 2, 3]}))\n"
        "print(con.execute('SELECT sum(a) FROM t').fetchall()[0][0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6"
