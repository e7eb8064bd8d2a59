"""Every sample's owner is proved from the rows, never from the file's word: a file
whose footer statistics lie about its key columns cannot add rows to another result, and the
warehouse's per-result counts agree with the samples it holds. Real contract files (their
footers edited byte for byte, as an attacker would), a real DuckDB warehouse, the real CLI."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, write_file

from benchdb.cli import main
from benchdb.schema import contract

pytestmark = pytest.mark.core


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _edit_footer(path: Path, old: bytes, new: bytes) -> int:
    """Replace ``old`` by ``new`` (same length) inside the Parquet footer only, as someone who
    edits a file's statistics would: the data pages keep their real values. Returns how many."""
    assert len(old) == len(new)
    data = bytearray(path.read_bytes())
    (footer_len,) = struct.unpack("<I", data[-8:-4])
    start = len(data) - 8 - footer_len
    footer = bytes(data[start:-8])
    count = footer.count(old)
    data[start:-8] = footer.replace(old, new)
    path.write_bytes(bytes(data))
    return count


def _with_meta(table: pa.Table, meta: dict) -> pa.Table:
    return table.replace_schema_metadata({contract.METADATA_KEY: json.dumps(meta).encode()})


def _forge(folder: Path, run: dict, *, own_rows: int, foreign: dict[str, object], name: str, batch_size: int) -> Path:
    """A valid contract file of its own scenario whose last rows carry other values in the key
    columns ``foreign`` names, written plain (no dictionary, no compression) and with its footer's
    statistics then edited to claim that every row carries the file's own key."""
    meta = make_meta(run, batch_size=batch_size)
    n_foreign = 5 * own_rows
    rows = [("latency_s", "s", i, i * 1e-3, 1e-3, 0) for i in range(own_rows)]
    rows += [("latency_s", "s", own_rows + i, (own_rows + i) * 1e-3, 1.0, 0) for i in range(n_foreign)]
    table = contract.samples_table(meta, rows)
    for column, value in foreign.items():
        col = table.schema.get_field_index(column)
        field = table.schema.field(col)
        values = table.column(col).to_pylist()[:own_rows] + [value] * n_foreign
        table = table.set_column(col, field, pa.array(values, field.type))
    path = folder / name
    pq.write_table(_with_meta(table, meta), path, compression="none", use_dictionary=False)
    for column, value in foreign.items():
        own = meta["scenario"][column] if column in meta["scenario"] else meta["run"][column]
        if isinstance(value, str):
            assert _edit_footer(path, value.encode(), str(own).encode()) > 0
        else:
            packed = struct.pack("<q" if column != "batch_size" else "<i", value)
            assert _edit_footer(path, packed, struct.pack("<q" if column != "batch_size" else "<i", own)) > 0
    return path


def _claims(path: Path, column: str) -> set:
    """What the file's footer statistics say the column holds (min and max of every row group)."""
    md = pq.read_metadata(path)
    idx = md.schema.names.index(column)
    return {
        v
        for g in range(md.num_row_groups)
        for v in (md.row_group(g).column(idx).statistics.min, md.row_group(g).column(idx).statistics.max)
    }


def _state(db: Path, result_id: str) -> tuple:
    """Everything the warehouse says of one result: its results and result_metrics rows and
    every one of its samples."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return (
            con.execute("SELECT * FROM results WHERE result_id = ?", [result_id]).fetchall(),
            con.execute("SELECT * FROM result_metrics WHERE result_id = ? ORDER BY ALL", [result_id]).fetchall(),
            con.execute("SELECT * FROM samples WHERE result_id = ? ORDER BY ALL", [result_id]).fetchall(),
        )
    finally:
        con.close()


def _digest(state: tuple) -> str:
    return hashlib.sha256(repr(state).encode()).hexdigest()


@pytest.fixture(scope="module")
def victim(tmp_path_factory):
    """A warehouse holding one ingested result (the victim of the forgeries below)."""
    base = tmp_path_factory.mktemp("victim")
    (base / "v").mkdir()
    run = make_run()
    path = write_file(base / "v", make_meta(run, batch_size=1), np.random.default_rng(1).normal(1e-3, 1e-5, 300))
    db = base / "w.duckdb"
    assert invoke("ingest", base / "v", "--db", db).exit_code == 0
    return db, contract.read_footer(path).scenario["scenario_id"], run


def _copy_warehouse(src: Path, dst_dir: Path) -> Path:
    import shutil

    dst = dst_dir / src.name
    shutil.copy2(src, dst)
    shutil.copytree(Path(f"{src}.samples"), Path(f"{dst}.samples"))
    return dst


def test_a_forged_footer_cannot_add_rows_to_another_result(tmp_path, victim):
    """The review's reproduction: 1,000 own rows plus 5,000 rows carrying an ingested result's
    scenario id, the footer's min/max edited to the file's own id. The file is rejected naming
    the key column, and the victim result is unchanged, byte for byte."""
    src, victim_id, run = victim
    db = _copy_warehouse(src, tmp_path)
    before = _state(db, victim_id)
    (tmp_path / "drop").mkdir()
    forged = _forge(
        tmp_path / "drop", run, own_rows=1000, foreign={"scenario_id": victim_id}, name="f.parquet", batch_size=2
    )
    own_id = contract.read_footer(forged).scenario["scenario_id"]
    assert _claims(forged, "scenario_id") == {own_id}  # the footer lies: every row group "is" own_id
    assert pq.read_table(forged).column("scenario_id").to_pylist().count(victim_id) == 5000

    r = invoke("ingest", tmp_path / "drop", "--db", db)
    assert r.exit_code == 1, r.output
    assert "scenario key columns: scenario_id differ from metadata.scenario in 5000 row(s)" in r.output
    assert "rejected 1; 0 samples" in r.output
    after = _state(db, victim_id)
    assert _digest(after) == _digest(before)
    assert len(after[2]) == 300
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM results WHERE result_id = ?", [own_id]).fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM samples").fetchone()[0] == 300
    finally:
        con.close()


@pytest.mark.parametrize(
    "column, value",
    [("batch_size", 0x5A5A5A5A), ("backend", "nympy"), ("run_id", None)],
    ids=["batch_size", "backend", "run_id"],
)
def test_a_forged_footer_on_any_key_column_is_caught_from_the_rows(tmp_path, victim, column, value):
    """The other key columns too: rows that differ from the file's key in an integer or a string
    column, behind statistics edited to claim the file's own value, reject the file."""
    src, victim_id, run = victim
    db = _copy_warehouse(src, tmp_path)
    if value is None:  # another run id of the same length
        value = make_run()["run_id"]
    (tmp_path / "drop").mkdir()
    forged = _forge(tmp_path / "drop", run, own_rows=200, foreign={column: value}, name="k.parquet", batch_size=3)
    own = contract.read_footer(forged)
    want = own.metadata["run"]["run_id"] if column == "run_id" else own.scenario[column]
    assert _claims(forged, column) == {want}
    r = invoke("ingest", tmp_path / "drop", "--db", db)
    assert r.exit_code == 1, r.output
    assert f"scenario key columns: {column} differ from metadata.scenario in 1000 row(s)" in r.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM samples").fetchone()[0] == 300
        assert con.execute("SELECT count(*) FROM results").fetchone()[0] == 1
    finally:
        con.close()


def test_two_forged_files_that_swap_rows_are_both_rejected(tmp_path):
    """Counting rows per id cannot prove ownership: two files that carry the same number of each
    other's rows keep every per-id count right. Ownership is checked per row, so both fail."""
    run = make_run()
    (tmp_path / "drop").mkdir()
    a_meta, b_meta = make_meta(run, batch_size=1), make_meta(run, batch_size=2)
    ids = [m["scenario"]["scenario_id"] for m in (a_meta, b_meta)]
    paths = []
    for meta, other, name in ((a_meta, ids[1], "a.parquet"), (b_meta, ids[0], "b.parquet")):
        rows = [("latency_s", "s", i, i * 1e-3, 1e-3, 0) for i in range(100)]
        table = contract.samples_table(meta, rows)
        col = table.schema.get_field_index("scenario_id")
        values = [meta["scenario"]["scenario_id"]] * 60 + [other] * 40
        table = table.set_column(col, table.schema.field(col), pa.array(values, pa.string()))
        path = tmp_path / "drop" / name
        pq.write_table(_with_meta(table, meta), path, compression="none", use_dictionary=False)
        _edit_footer(path, other.encode(), meta["scenario"]["scenario_id"].encode())
        paths.append(path)
    db = tmp_path / "w.duckdb"
    r = invoke("ingest", tmp_path / "drop", "--db", db)
    assert r.exit_code == 1, r.output
    assert r.output.count("scenario key columns: scenario_id differ from metadata.scenario in 40 row(s)") == 2
    assert "rejected 2; 0 samples" in r.output


def test_db_check_proves_counts_after_ingest_and_names_what_disagrees(tmp_path):
    """`db check` reads every sample once: after an ingest (one batch written again without a
    rejected file) every count agrees; a count changed through a plain DuckDB connection, or rows
    dropped into the samples folder, is named in one line each, exit 1."""
    run = make_run()
    (tmp_path / "r").mkdir()
    for b in (1, 2, 3):
        write_file(tmp_path / "r", make_meta(run, batch_size=b), np.random.default_rng(b).normal(1e-3, 1e-5, 80))
    nan = np.full(40, 1e-3)
    nan[3] = float("nan")
    write_file(tmp_path / "r", make_meta(run, batch_size=4), nan)
    db = tmp_path / "w.duckdb"
    assert invoke("ingest", tmp_path / "r", "--db", db).exit_code == 1  # the NaN file is rejected
    r = invoke("db", "check", "--db", db)
    assert r.exit_code == 0, r.output
    assert "3 result(s), 240 sample(s): every count agrees with the samples held" in r.output

    con = duckdb.connect(str(db))
    try:
        victim = con.execute("SELECT min(result_id) FROM results").fetchone()[0]
        con.execute("UPDATE result_metrics SET n = n + 1 WHERE result_id = ?", [victim])
        part = next(Path(f"{db}.samples").rglob("*.parquet"))
        con.execute(
            f"COPY (SELECT * REPLACE ('{'f' * 40}' AS result_id) FROM read_parquet('{part}') LIMIT 5) "
            f"TO '{part.parent / 'extra.parquet'}' (FORMAT parquet)"
        )
    finally:
        con.close()
    r = invoke("db", "check", "--db", db)
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert f"  result {victim} latency_s: recorded n 81, 80 sample(s) held" in lines
    assert f"  result {'f' * 40} latency_s: no result, 5 sample(s) held" in lines
    assert "2 count(s) disagree with the samples held" in r.stderr
