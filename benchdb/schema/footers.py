"""Many contract files' footers at once (ingest's batches): :func:`read_footers` gives each file
:func:`benchdb.schema.contract.read_footer`'s own verdict from one DuckDB query, checking each
distinct Parquet schema once."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchdb.schema.contract import (
    METADATA_KEY,
    ContractError,
    FileFooter,
    check_schema,
    read_footer,
    validate_metadata,
)


def read_footers(con, paths: Iterable[str | os.PathLike]) -> dict[str, FileFooter | ContractError]:
    """:func:`read_footer` over many files at once, with the same verdicts and messages: the
    footers are read in one DuckDB query on ``con`` (``queries/contract_footers.sql``), and the
    Arrow schema is checked once per distinct Parquet schema instead of once per file. Returns
    ``{str(path): FileFooter or the ContractError read_footer would raise}`` in the order given.

    A batch DuckDB cannot read as a whole (a corrupt file in it) is split in halves until the
    unreadable file is alone; it, and any file the bulk read cannot judge exactly (a repeated
    metadata key, a schema that fails the contract), gets :func:`read_footer`'s own verdict.
    """
    names = [str(p) for p in paths]
    return judge_footers(query_footers(con, names), names)


def query_footers(con, paths: Iterable[str | os.PathLike]) -> list[tuple]:
    """The DuckDB half of :func:`read_footers`: one row per file DuckDB could read (a batch it
    cannot read as a whole is split in halves until the unreadable file is alone, and left out).
    Most of its time is DuckDB's, which releases the GIL: ingest hashes files meanwhile."""
    import duckdb

    from benchdb import sql

    names = [str(p) for p in paths]
    if not names:
        return []
    try:
        return con.execute(
            sql.load("queries/contract_footers.sql"),
            {"files": sql.literals(names), "contract_key": METADATA_KEY, "arrow_key": b"ARROW:schema"},
        ).fetchall()
    except duckdb.InterruptException:  # Ctrl-C: no reason to read the halves
        raise
    except duckdb.Error:
        if len(names) == 1:
            return []
        half = len(names) // 2
        return query_footers(con, names[:half]) + query_footers(con, names[half:])


def judge_footers(rows: list[tuple], names: list[str]) -> dict[str, FileFooter | ContractError]:
    """The Python half of :func:`read_footers`: each of ``names`` judged from its row of
    :func:`query_footers` (``rows`` may hold other files too); a file without one (DuckDB could
    not read it, or a glob character in its name kept it from the listing) is read alone."""
    wanted = set(names)
    out: dict[str, FileFooter | ContractError] = {}
    schema_ok: dict[tuple, bool] = {}
    for name, num_rows, columns, arrow_schema, raw, repeated_key in rows:
        if name not in wanted:
            continue
        signature = _arrow_signature(arrow_schema)
        if repeated_key or name in out or signature is False:
            out[name] = _footer_or_error(name)
            continue
        try:
            meta = json.loads(raw) if raw is not None else None
        except ValueError:
            meta = None
        version = meta.get("contract_version") if isinstance(meta, dict) else None
        key = (columns, signature, version == 1)
        if key not in schema_ok:
            schema_ok[key] = _schema_error(name, version) is None
        if not schema_ok[key] or raw is None or meta is None:
            out[name] = _footer_or_error(name)  # the exact message, from the file itself
            continue
        try:
            out[name] = FileFooter(validate_metadata(meta), num_rows)
        except ContractError as exc:
            out[name] = exc
    return {name: out[name] if name in out else _footer_or_error(name) for name in names}


def _arrow_signature(stored: bytes | None) -> bytes | None | bool:
    """The Arrow schema pyarrow stored in a file (``ARROW:schema``) without its key-value metadata
    (the contract document differs in every file), serialized; None when absent, False when it
    cannot be read."""
    if stored is None:
        return None
    import base64

    try:
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(stored)))
    except (pa.ArrowException, ValueError):
        return False
    return schema.remove_metadata().serialize().to_pybytes()


def _footer_or_error(path: str) -> FileFooter | ContractError:
    try:
        return read_footer(path)
    except ContractError as exc:
        return exc


def _schema_error(path: str, version: Any) -> ContractError | None:
    try:
        check_schema(pq.read_metadata(path).schema.to_arrow_schema(), version)
    except ContractError as exc:
        return exc
    except (pa.ArrowException, OSError) as exc:
        return ContractError("file", f"not a readable Parquet file ({str(exc).splitlines()[0]})")
    return None
