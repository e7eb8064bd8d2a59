"""The warehouse itself: `benchdb ingest`, `db status`, `db upgrade`, `query` and `ack`.

Each command parses its options, makes one call on :class:`benchdb.warehouse.Warehouse`
(imported inside the command: `benchdb --help` imports no duckdb) and prints.
"""

from __future__ import annotations

import shlex
import sys

import click

from benchdb.cli.help import command, group
from benchdb.cli.shared_options import db_option, duration_type
from benchdb.errors import printable


@command(
    "ingest",
    examples=(
        (
            "load a run's files (a folder is read recursively; files already loaded are skipped)",
            "benchdb ingest results",
        ),
        (
            "load the files of a shared bucket into a team warehouse",
            "benchdb ingest s3://my-bucket/results --db team.duckdb",
        ),
    ),
    exit_codes={1: "a file was rejected (each is named with why on standard error); the others were loaded"},
)
@click.argument("paths", nargs=-1, required=True)
@db_option()
@click.option(
    "--wait",
    "wait_s",
    type=duration_type(),
    default="60s",
    show_default=True,
    help="How long to wait for another process that holds the database: 60s, 5m, or bare seconds.",
)
@click.option(
    "--batch-rows",
    type=click.IntRange(min=1),
    default=None,
    hidden=True,
    help="Sample rows per load transaction (tuning and tests).",
)
def ingest(paths, db, wait_s, batch_rows):
    """Load measurement files into the warehouse.

    PATHS are Parquet measurement files, folders of them (read recursively) or fsspec URLs
    (s3://, gs://, hf://...). A file loaded before is skipped; a bad file is rejected with why,
    and the others are loaded."""
    from benchdb.warehouse import Warehouse

    def progress(done, total):
        click.echo(f"  loaded {done}/{total} file(s)", err=True)

    summary = Warehouse(db, wait_s=wait_s).ingest(paths, batch_rows=batch_rows, progress=progress)
    for path, reason in summary.rejected_before:
        click.echo(printable(f"skipped {path}: rejected before, unchanged since: {reason}"), err=True)
    for path, reason in summary.rejected:
        click.echo(printable(f"rejected {path}: {reason}"), err=True)
    click.echo(summary.line())
    if summary.change_points:
        click.echo(
            f"{summary.change_points} open change point(s) in the history of the series loaded; "
            "see `benchdb report --regressions`"
        )
    if summary.rejected:
        sys.exit(1)


#: Parts beyond which `db status` suggests a compaction (a footer read each per query: ~0.1 s a thousand).
MANY_PARTS = 1000


@group(
    "db",
    examples=(
        ("the schema version and table sizes", "benchdb db status"),
        ("migrate a warehouse written by an older benchdb", "benchdb db upgrade --db team.duckdb"),
    ),
)
def db_group():
    """Inspect, migrate or compact the warehouse."""


@db_group.command(
    "status",
    examples=(
        ("the default warehouse's schema and sizes", "benchdb db status"),
        ("another warehouse", "benchdb db status --db team.duckdb"),
    ),
)
@db_option()
def db_status(db):
    """Schema version against this benchdb's, and table sizes."""
    from benchdb.warehouse import Warehouse

    st = Warehouse(db).status()
    if not st["exists"]:
        click.echo(
            f"{st['path']}: does not exist (benchdb schema version {st['code_version']}); `benchdb ingest` creates it"
        )
        return
    state = (
        "up to date"
        if st["pending"] == 0 and st["schema_version"] <= st["code_version"]
        else f"{st['pending']} migration(s) pending: run `benchdb db upgrade --db {shlex.quote(str(st['path']))}`"
        if st["schema_version"] < st["code_version"]
        else "newer than this benchdb: upgrade benchdb"
    )
    click.echo(f"{st['path']}: schema version {st['schema_version']}, benchdb supports {st['code_version']} ({state})")
    for name, n in st["tables"].items():
        click.echo(f"  {name:<16} {n:>12,} rows")
    folder = st.get("samples_folder")
    if folder:
        click.echo(
            printable(f"  samples folder {folder['path']}: {folder['parts']:,} part(s), {folder['bytes']:,} bytes")
        )
        if folder["parts"] >= MANY_PARTS:
            click.echo(
                f"  every query reads each part's footer: `benchdb db compact --db {st['path']}` rewrites them as one"
            )


@db_group.command("upgrade", examples=(("migrate the default warehouse in place", "benchdb db upgrade"),))
@db_option()
def db_upgrade(db):
    """Apply pending migrations in place.

    Each migration runs in its own transaction; a database newer than this benchdb is refused."""
    from benchdb.warehouse import Warehouse

    wh = Warehouse(db)
    done = wh.upgrade()
    if done.applied:
        click.echo(
            f"{wh.path}: applied {', '.join(f'{m.version:04d}_{m.name}' for m in done.applied)}; "
            f"schema version {done.version}"
        )
    else:
        click.echo(f"{wh.path}: already at schema version {done.version}")
    if done.restored:
        click.echo(printable(f"{wh.path}: restored benchdb's views and macros ({done.restored})"))
    if done.moved:
        click.echo(printable(f"{wh.path}: samples read from {done.moved[1]} (were at {done.moved[0]})"))


@db_group.command(
    "check",
    examples=(
        ("prove that every result's counts agree with the samples held", "benchdb db check"),
        ("another warehouse", "benchdb db check --db team.duckdb"),
    ),
)
@db_option()
def db_check(db):
    """Check that every result's counts agree with its samples.

    Reads every raw sample once. Exit 0 when all agree; 1, with one line per disagreement, when a
    result's recorded count (results.n, result_metrics.n) differs from its samples or samples
    belong to no result (a warehouse changed outside benchdb)."""
    from benchdb.warehouse import Warehouse

    wh = Warehouse(db)
    results, samples, found = wh.count_mismatches()
    if not found:
        click.echo(f"{wh.path}: {results:,} result(s), {samples:,} sample(s): every count agrees with the samples held")
        return
    for result_id, metric, recorded, held in found[:50]:
        said = "no result" if recorded is None else f"recorded n {recorded:,}"
        click.echo(printable(f"  result {result_id} {metric}: {said}, {held:,} sample(s) held"))
    if len(found) > 50:
        click.echo(f"  ... and {len(found) - 50:,} more")
    click.echo(
        printable(
            f"{wh.path}: {len(found):,} count(s) disagree with the samples held; the warehouse was changed "
            "outside benchdb: re-ingest its files into a new warehouse"
        ),
        err=True,
    )
    sys.exit(1)


@db_group.command(
    "compact", examples=(("merge the samples' parts once `db status` counts thousands", "benchdb db compact"),)
)
@db_option()
def db_compact(db):
    """Rewrite the raw samples' parts as one sorted part.

    Every ingest adds a part beside the warehouse file, and a query reads each part's footer:
    compact now and then when `db status` counts thousands. The parts replaced stay on disk
    for readers that opened the warehouse before, until the next compaction removes them."""
    from benchdb.warehouse import Warehouse

    wh = Warehouse(db)
    done = wh.compact()
    removed = f"; removed {done.removed} generation(s) an earlier compaction replaced" if done.removed else ""
    if done.parts_after == done.parts_before:
        click.echo(f"{wh.path}: {done.parts_before} part(s), nothing to compact{removed}")
    else:
        click.echo(
            f"{wh.path}: {done.rows:,} samples in {done.parts_before} part(s) rewritten as {done.parts_after}{removed}"
        )


@command(
    "query",
    examples=(
        (
            "the newest valid result of every series",
            'benchdb query "SELECT model_id, backend, median FROM results_latest LIMIT 5"',
        ),
        ("the same as CSV, for a spreadsheet", 'benchdb query "SELECT * FROM results_latest" --format csv'),
    ),
    exit_codes={2: "bad input, or the SQL failed or writes (the connection is read-only); one line says why"},
)
@click.argument("sql_text", metavar="SQL")
@db_option()
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def query(sql_text, db, fmt):
    """Run a read-only SQL query against the warehouse.

    SQL may read every table and view (docs: warehouse.md); nothing can write."""
    from benchdb.reports.tabular import render
    from benchdb.warehouse import READ_WAIT_S, Warehouse

    cols, rows = Warehouse(db, wait_s=READ_WAIT_S).query(sql_text)
    if cols:
        click.echo(render(cols, rows, fmt))


@command(
    "ack",
    examples=(
        (
            "accept change point 3f2a9c1e (an id prefix from `benchdb report --regressions`)",
            'benchdb ack 3f2a9c1e --note "new tokenizer: slower by design"',
        ),
    ),
    exit_codes={2: "bad input: no change point with that id (or a prefix of several)"},
)
@click.argument("change_id")
@click.option("--note", required=True, help="Why the shift is intended (kept with the change point).")
@db_option()
def ack(change_id, note, db):
    """Accept a change point as intended (no longer reported)."""
    from benchdb.warehouse import Warehouse

    full = Warehouse(db).ack(change_id, note)
    click.echo(f"acknowledged change point {full}: {note}")


COMMANDS = (ingest, db_group, query, ack)
