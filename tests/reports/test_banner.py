"""The banner at the top of a report when results were measured on a busy machine
(benchdb/reports/banner.py): how many of the latest timing results, how many invalid, the CPU range
and the limits, the flagged results busiest invalid first; nothing when none was flagged."""

from __future__ import annotations

import pytest
from conftest import make_meta, make_run, write_file

from benchdb.reports.banner import busy_banner
from benchdb.reports.document import Filters
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def _busy(pct: float, limit: float, converged: bool) -> str:
    busy = f"busy_machine: other processes used {pct:.0f}% CPU before the scenario (limit {limit:.0f}%)"
    if converged:
        return f"{busy}; CI of the median +-0.8% met the target +-1.0%, so the result stays valid"
    return f"{busy}; CI of the median +-9.1% did not converge to the target +-1.0%"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Four latest timing results: one converged on a 60 % busy machine (valid, a warning), one that
    did not converge at 85 % (invalid), one invalid for another reason, one on a quiet machine."""
    root = tmp_path_factory.mktemp("busy")
    run = make_run()
    for bs, pct, limit, how in (
        (1, 60.0, 50, "warned"),
        (2, 85.0, 40, "invalid"),
        (4, None, 0, "noisy"),
        (8, 5.0, 0, ""),
    ):
        meta = make_meta(run, batch_size=bs)
        sc = meta["scenario"]
        sc["settings"] = {"background_cpu_pct": pct}
        if how == "warned":
            sc["extra"] = {"warnings": [_busy(pct, limit, True)]}
        elif how == "invalid":
            sc["validity"], sc["validity_reasons"] = "invalid", [_busy(pct, limit, False)]
        elif how == "noisy":
            sc["validity"], sc["validity_reasons"] = "invalid", ["noisy: CI of the median +-9.0% > 5 x target +-1.0%"]
        write_file(root / "res", meta)
    path = root / "w.duckdb"
    Warehouse(path).ingest([root / "res"])
    return path


def test_the_banner_counts_the_flagged_results_and_lists_the_invalid_first(db):
    with Warehouse(db).reading() as con:
        banner = busy_banner(con, Filters())
    assert (banner.flagged, banner.total, banner.invalid) == (2, 4, 1)
    assert (banner.cpu_min, banner.cpu_max, banner.more) == (60.0, 85.0, 0)
    assert banner.text.startswith(
        "2 of 4 latest timing results were measured while other processes used 60-85 % CPU (limits 40-50 %); "
        "1 of them is invalid because its confidence interval did not converge to the target; the other one "
        "converged and stays valid, with a warning. Close other programs and measure again"
    )
    assert (
        banner.line
        == "2 of 4 latest timing results ran while other processes used 60-85 % CPU (limits 40-50 %); 1 invalid."
    )
    assert [(r["batch_size"], r["verdict"]) for r in banner.rows] == [
        (2, "invalid: did not converge"),
        (1, "valid (warning)"),
    ]
    assert banner.rows[0]["detail"] == "CI of the median +-9.1% did not converge to the target +-1.0%"
    assert [c.key for c in banner.columns][-3:] == ["background_cpu_pct", "verdict", "detail"]


def test_no_banner_when_the_filters_leave_no_flagged_result(db):
    with Warehouse(db).reading() as con:
        assert busy_banner(con, Filters(models=("nosuch",))) is None
        one = busy_banner(con, Filters(hardware=("Test CPU 9000",)))
    assert one is not None and one.flagged == 2
