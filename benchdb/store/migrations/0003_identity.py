"""Companion of 0003_identity.sql: identity columns for the results already in a warehouse.

Each result gets the options, canonical device and engine precision that
:func:`benchdb.schema.contract.upgrade_v1_scenario` gives a contract v1 file (the same rule
ingest applies to old files), then its series id; change points follow their series.
"""

import json

from benchdb import sql


def migrate(con) -> None:
    rows = sql.rows(con.execute(sql.load("queries/migrate_0003_results.sql")))
    moved: dict = {}
    if rows:
        _results(con, rows, moved)
    _change_points(con, moved)


def _results(con, rows: list[dict], moved: dict) -> None:
    # imported only where there are results to move: a new warehouse (and the catalog benchdb builds in
    # memory to check stored SQL against) needs neither the contract's pydantic nor pyarrow (~0.5 s)
    import pyarrow as pa

    from benchdb.schema import contract, identity

    updates = []
    for r in rows:
        sc = {**r, "settings": json.loads(r["settings"] or "{}"), "extra": json.loads(r["extra"] or "{}")}
        up = contract.upgrade_v1_scenario(sc, json.loads(r["fingerprint"] or "{}"), json.loads(r["config"] or "{}"))
        new = {**sc, **up}
        options = identity.canonical_options(up["options"])
        series = identity.series_id(new, r["hardware_id"])
        updates.append(
            {
                "result_id": r["result_id"],
                "device": new["device"],
                "precision": new["precision"],
                "input_shape": new["input_shape"],
                "validity": new["validity"],
                "validity_reasons": list(new["validity_reasons"] or []),
                "options": json.dumps(options, sort_keys=True),
                "options_id": identity.options_id(options),
                "series_id": series,
            }
        )
        old_key = (
            r["run_id"],
            r["model_id"],
            r["backend"],
            r["device"],
            r["mode"],
            r["precision"],
            r["batch_size"],
            r["input_shape"],
            r["hardware_id"],
        )
        moved[old_key] = (series, new["device"], new["precision"], new["input_shape"], identity.options_id(options))
    if updates:
        table = pa.Table.from_pylist(
            updates,
            schema=pa.schema(
                [
                    ("result_id", pa.string()),
                    ("device", pa.string()),
                    ("precision", pa.string()),
                    ("input_shape", pa.string()),
                    ("validity", pa.string()),
                    ("validity_reasons", pa.list_(pa.string())),
                    ("options", pa.string()),
                    ("options_id", pa.string()),
                    ("series_id", pa.string()),
                ]
            ),
        )
        con.register("identity_updates", table)
        con.execute(sql.load("queries/migrate_0003_apply.sql"))
        con.unregister("identity_updates")


def _change_points(con, moved: dict) -> None:
    """Change points move to their series' new id (and so get a new change id); their review
    status and note stay. One whose run no longer has the result keeps its old ids."""
    rows = sql.rows(con.execute("SELECT * FROM change_points"))
    if not rows:
        return
    import pyarrow as pa

    from benchdb.schema import identity

    for cp in rows:
        key = (
            cp["run_id"],
            cp["model_id"],
            cp["backend"],
            cp["device"],
            cp["mode"],
            cp["precision"],
            cp["batch_size"],
            cp["input_shape"],
            cp["hardware_id"],
        )
        if key in moved:
            cp["series_id"], cp["device"], cp["precision"], cp["input_shape"], cp["options_id"] = moved[key]
            cp["change_id"] = identity.change_id(cp["series_id"], cp["run_id"])
    con.execute("DELETE FROM change_points")
    con.register("moved_change_points", pa.Table.from_pylist(rows))
    con.execute(sql.load("queries/migrate_0003_change_points.sql"))
    con.unregister("moved_change_points")
