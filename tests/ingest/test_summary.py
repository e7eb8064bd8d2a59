"""benchdb.ingest.summary: the one line an ingest prints. Copies of loaded files count as skipped
with them, files rejected earlier and unchanged are named apart from this call's rejections."""

from __future__ import annotations

import pytest

from benchdb.ingest.summary import IngestSummary

pytestmark = pytest.mark.core


def test_the_line_counts_what_the_ingest_did():
    s = IngestSummary("w.duckdb", found=6, new=2, skipped=1, duplicates=1, samples=12345, seconds=0.456)
    s.rejected.append(("bad.parquet", "not a Parquet file"))
    assert s.line() == (
        "ingested 2 new file(s), skipped 2 already loaded, rejected 1; 12,345 samples in 0.46 s into w.duckdb"
    )
    s.rejected_before += [("old1.parquet", "why then"), ("old2.parquet", "why then")]
    assert s.line().startswith(
        "ingested 2 new file(s), skipped 2 already loaded and 2 rejected before (unchanged), rejected 1; "
    )


def test_a_new_summary_owns_its_lists():
    a, b = IngestSummary("a.duckdb"), IngestSummary("b.duckdb")
    a.rejected.append(("x", "y"))
    a.run_ids.add("r")
    assert b.rejected == [] and b.run_ids == set() and b.rejected_before == []
    assert b.line() == "ingested 0 new file(s), skipped 0 already loaded, rejected 0; 0 samples in 0.00 s into b.duckdb"
