"""`benchdb calibrate` and `benchdb predict` (:mod:`benchdb.cli.perfmodel`) around their library
calls (:mod:`benchdb.perfmodel.answers`); the model itself: tests/perfmodel/."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.cli import perfmodel as perfmodel_commands

pytestmark = pytest.mark.core


def test_predict_reads_the_warehouse_before_asking_for_a_model(tmp_path):
    missing = tmp_path / "none.duckdb"
    r = CliRunner().invoke(main, ["predict", "--db", str(missing)])
    assert r.exit_code == 2 and r.stderr.startswith(f"benchdb: error: database {missing} does not exist")
    assert {c.name for c in perfmodel_commands.COMMANDS} == {"calibrate", "predict"}
