"""The dashboard's views (benchdb.web.views) queried on a real warehouse: an open change point carries
the command that acknowledges it, and once acknowledged, its note."""

from __future__ import annotations

import pytest
from conftest import cli
from support.dashboard_warehouse import write_run

from benchdb.warehouse import Warehouse


@pytest.mark.core
def test_an_open_change_point_carries_the_command_that_acknowledges_it(tmp_path):
    res = tmp_path / "results"
    for day in range(1, 13):  # a clear step after day 6: a change point
        write_run(res / f"d{day}", day, shift=1.0 if day <= 6 else 1.5)
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([res])
    from benchdb.web import views as api

    with Warehouse(db).reading() as con:
        doc = api.query(con, "change_points", {})
    recs = [dict(zip(doc["columns"], r, strict=True)) for r in doc["rows"]]
    assert recs and all(r["status"] == "open" for r in recs)
    assert recs[0]["acknowledge_with"] == f'benchdb ack {recs[0]["change_id"]} --note "why"'
    r = cli("ack", recs[0]["change_id"], "--note", "expected: new kernel", "--db", db)
    assert r.exit_code == 0, r.output
    with Warehouse(db).reading() as con:
        doc = api.query(con, "change_points", {})
    acked = [dict(zip(doc["columns"], r, strict=True)) for r in doc["rows"] if r[0] == recs[0]["change_id"]][0]
    assert acked["status"] == "acked" and acked["acknowledge_with"] is None and acked["note"] == "expected: new kernel"


@pytest.mark.core
def test_a_view_or_filter_the_dashboard_does_not_have_is_refused_naming_it():
    from benchdb.web import views as api

    view, bound = api.checked("trends", {"series": "abc"})
    assert view.name == "trends" and bound["series"] == "abc"
    for name, params, why in (
        ("nothing", {}, "no dashboard view 'nothing'; the views: "),
        ("results", {"modle": "x"}, "view results takes no filter 'modle' (it takes: "),
        ("trends", {}, "view trends needs series=..."),
        ("optimal", {"objective": "cheapest"}, "view optimal: objective is one of "),
        ("optimal", {"batch": "one"}, "view optimal: batch must be a number, not 'one'"),
    ):
        with pytest.raises(api.UnknownView) as err:
            api.checked(name, params)
        assert str(err.value).startswith(why), str(err.value)


@pytest.mark.core
def test_values_become_json_ready():
    import datetime as dt
    import math
    from decimal import Decimal

    from benchdb.web import views as api

    naive = dt.datetime(2026, 11, 1, 10, 0)
    assert api.plain(naive) == "2026-11-01T10:00:00+00:00"  # the warehouse keeps UTC
    assert api.plain(dt.date(2026, 11, 1)) == "2026-11-01"
    assert api.plain(Decimal("1.5")) == 1.5 and api.plain(math.inf) is None and api.plain(math.nan) is None
    assert api.plain([naive, (Decimal("2"), math.nan)]) == ["2026-11-01T10:00:00+00:00", [2.0, None]]
