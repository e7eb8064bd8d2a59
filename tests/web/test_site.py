"""`benchdb site` (benchdb.web.site): every view, every series' history and every result's samples
written as the server answers them, the charting library beside the page, and a second build replacing
the first whole. A real warehouse, real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import dashboard_warehouse

from benchdb.warehouse import Warehouse


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return dashboard_warehouse.build(tmp_path)


@pytest.mark.core
def test_site_writes_every_view_and_every_series_and_result(warehouse, tmp_path):
    from benchdb.web.site import build

    out = tmp_path / "site"
    counts = build(str(warehouse), out)
    assert counts["runs"] == 3 and counts["results"] == 2 and counts["compare"] == 2
    assert counts["trends"] == 2 and counts["samples"] == 7  # every series; every result of every run
    shards = json.loads((out / "data" / "views.json").read_text())["site"]["shards"]
    from benchdb.web import packed
    from benchdb.web import views as api

    def trends_file(series: str) -> dict:
        return json.loads((out / "data" / "trends" / f"{packed.shard_of(series, shards['trends'])}.json").read_text())

    def samples_file(result: str) -> Path:
        return out / "data" / "samples" / f"{packed.shard_of(result, shards['samples'])}.bin"

    flagged = _oom_result(warehouse, "series_id")
    assert flagged not in trends_file(flagged)["series"]  # no valid result: no history (the page: empty, not a 404)
    with Warehouse(warehouse).reading() as con:  # each series and result as the server answers it
        results = api.query(con, "results", {})
        for row in results["rows"]:
            rec = dict(zip(results["columns"], row, strict=True))
            served = json.loads(json.dumps(api.query(con, "trends", {"series": rec["series_id"]})))
            shard = trends_file(rec["series_id"])
            assert shard["columns"] == served["columns"] and shard["series"][rec["series_id"]] == served["rows"]
            samples = api.query(con, "samples", {"result": rec["result_id"]})
            written = packed.read_samples(samples_file(rec["result_id"]), rec["result_id"])
            assert written is not None and written["statistics"] == samples["statistics"]
            assert [r[:4] for r in written["rows"]] == [r[:4] for r in samples["rows"]]
            assert [r[5] for r in written["rows"]] == pytest.approx([r[5] for r in samples["rows"]], rel=1e-4)
    failed = packed.read_samples(samples_file(_oom_result(warehouse)), _oom_result(warehouse))
    assert (
        failed is not None
        and failed["rows"] == []
        and failed["statistics"]["rows"][0][failed["statistics"]["columns"].index("status")] == "oom"
    )  # no samples, but what it was
    assert 'content="static"' in (out / "index.html").read_text()
    assert (out / "static" / "app.js").is_file()
    from benchdb.web import assets

    for name in assets.files():  # the charting library travels with the site: no CDN
        assert (out / "static" / "vendor" / name).read_bytes() == assets.files()[name].read_bytes()
    build(str(warehouse), out)  # again: replaced whole, nothing left over
    assert not list(tmp_path.glob(".site.*"))


def _oom_result(db: Path, column: str = "result_id") -> str:
    with Warehouse(db).reading() as con:
        return con.execute(f"SELECT {column} FROM results WHERE status = 'oom'").fetchone()[0]
