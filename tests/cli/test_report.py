"""`benchdb report` and `benchdb check` (:mod:`benchdb.cli.report`): the forms offered are the
renderer's, and options that belong to another report are refused before the warehouse is read.
The reports themselves: tests/reports/."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.cli import report as report_commands
from benchdb.reports.render import REPORT_FORMATS

pytestmark = pytest.mark.core


def test_report_writes_the_forms_the_renderer_knows():
    option = next(p for p in report_commands.report.params if p.name == "fmt")
    assert sorted(option.type.choices) == sorted(REPORT_FORMATS)


@pytest.mark.parametrize(
    "args,says",
    [
        ([], "choose a report: --optimal-hardware"),
        (["--matrix", "--slo", "ttft:1s"], "--slo applies to --serving"),
        (["--serving", "--chassis", "README.md"], "--chassis applies to --serving --cost-at"),
    ],
)
def test_options_of_another_report_are_refused_first(tmp_path, args, says):
    r = CliRunner().invoke(main, ["report", *args, "--db", str(tmp_path / "none.duckdb")])
    assert r.exit_code == 2 and r.stderr.startswith(f"benchdb: error: {says}"), r.stderr
