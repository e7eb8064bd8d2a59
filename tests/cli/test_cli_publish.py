"""`benchdb publish` and report's --model-card options (:mod:`benchdb.cli.publish`): options that go
together are refused apart, before the Hub or the warehouse is touched. Publishing: tests/hub/."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.cli.publish import model_card_options

pytestmark = pytest.mark.core


@pytest.mark.parametrize(
    "args,says",
    [
        (["publish"], "give --repo ORG/NAME (a dataset of the results) or --space ORG/NAME (the dashboard)"),
        (["publish", "--repo", "a/b", "--space", "c/d"], "give --repo ORG/NAME"),
        (["publish", "--repo", "a/b", "--replace-existing"], "--replace-existing goes with --space ORG/NAME"),
        (["report", "--matrix", "--push"], "--push and --dataset go with --model-card MODEL"),
    ],
)
def test_options_that_go_together_are_refused_apart(tmp_path, args, says):
    r = CliRunner().invoke(main, [*args, "--db", str(tmp_path / "none.duckdb")])
    assert r.exit_code == 2 and r.stderr.strip().startswith(f"benchdb: error: {says}"), r.stderr
    assert not (tmp_path / "none.duckdb").exists()


def test_a_command_with_model_card_options_writes_the_section_instead():
    """Without --model-card the command runs as it is; with it, its own work is skipped."""
    import click

    ran = []

    @click.command()
    @model_card_options
    @click.option("--db", default=None)
    @click.option("--out", default=None)
    def report(db, out):
        ran.append((db, out))

    assert {p.name for p in report.params} >= {"model_card", "dataset", "push", "db", "out"}
    assert CliRunner().invoke(report, ["--db", "w.duckdb"]).exit_code == 0 and ran == [("w.duckdb", None)]
