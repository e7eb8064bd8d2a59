"""`benchdb dashboard`, its former name `benchdb serve`, and `benchdb site` (:mod:`benchdb.cli.web`).
The server and the page: tests/web/."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.cli import web as web_commands

pytestmark = pytest.mark.core


def test_serve_is_the_dashboard_under_its_former_name(tmp_path):
    assert web_commands.serve_cmd.params == web_commands.dashboard_cmd.params and web_commands.serve_cmd.hidden
    missing = tmp_path / "none.duckdb"
    r = CliRunner().invoke(main, ["serve", "--db", str(missing)])
    assert r.exit_code == 2
    assert r.stderr.splitlines() == [
        "benchdb: note: `benchdb serve` is now `benchdb dashboard`; the old name keeps working",
        f"benchdb: error: database {missing} does not exist; create it with `benchdb ingest RESULTS_DIR "
        f"--db {missing}`",
    ]
