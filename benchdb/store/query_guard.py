"""What `benchdb query` lets reach DuckDB: reads, and nothing that can create, change or delete a file.

The connection is read-only and sandboxed (:func:`benchdb.store.database.connect`): DuckDB reads no
file but the warehouse and its samples folder, and its configuration is locked, so ``SET``,
``RESET``, ``PRAGMA`` and ``enable_logging()`` cannot reopen access. That alone does not keep the
samples folder unchanged: DuckDB has no read-only grant (``allowed_directories`` and
``allowed_paths`` let a connection write wherever it may read), so ``COPY ... TO`` or ``EXPORT
DATABASE`` there would delete or rewrite the parts every reader trusts. The text is therefore
checked before it runs, against an allow-list:

- every statement is a read: a SELECT (also WITH, FROM-first, VALUES, PIVOT/UNPIVOT, SUMMARIZE,
  DESCRIBE, SHOW), EXPLAIN [ANALYZE] of a read, CALL of a table function that only reads,
  PREPARE of a read, or EXECUTE of a statement PREPAREd earlier in the same text (each PREPARE
  was checked, and the connection is new). Any other kind is refused: COPY, EXPORT, ATTACH,
  INSTALL/LOAD, SET/RESET, PRAGMA (also how DuckDB parses COPY FROM DATABASE and IMPORT
  DATABASE), CREATE (macros, temporary tables), CHECKPOINT, transactions, and kinds added later;
- a statement DuckDB splits in several (``MULTI``: a PIVOT with no IN list, in any position, even
  inside a COPY) hides its parts from Python, so it passes only when it begins as a read;
- no statement runs inside a read: DuckDB runs ``WITH d AS (COPY ... TO ...) SELECT ...`` and
  ``WITH d AS (DELETE ... RETURNING *) ...`` as a SELECT, so the keywords COPY, INSERT, UPDATE,
  DELETE and MERGE are refused anywhere in a statement (a column of such a name, quoted, is fine);
- a table function is one known to only read (:data:`READ_TABLE_FUNCTIONS`); ``checkpoint()``,
  ``enable_logging()``, ``query()`` (SQL from a string), and any table function that list does not
  name, are refused.

Text DuckDB cannot parse is refused with DuckDB's parser error: none of it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from benchdb import sql
from benchdb.errors import BenchdbError, clip, first_line

if TYPE_CHECKING:
    import duckdb

#: How every refusal begins.
READ_ONLY = "benchdb query is read-only and reads only the warehouse"
_RUNS = (
    "it runs SELECT (also WITH, PIVOT, SUMMARIZE, DESCRIBE, SHOW), EXPLAIN, CALL of a read-only "
    "table function, and PREPARE/EXECUTE of those"
)

#: DuckDB's table functions that only read: catalog listings, file readers (which the sandbox keeps
#: to the warehouse's own files), generators. Any other (and any a later DuckDB adds) is refused.
READ_TABLE_FUNCTIONS = frozenset(
    {
        "duckdb_approx_database_count",
        "duckdb_available_metrics",
        "duckdb_columns",
        "duckdb_connection_count",
        "duckdb_constraints",
        "duckdb_coordinate_systems",
        "duckdb_databases",
        "duckdb_dependencies",
        "duckdb_dialects",
        "duckdb_eviction_queues",
        "duckdb_extension_repositories",
        "duckdb_extensions",
        "duckdb_external_file_cache",
        "duckdb_external_resource_types",
        "duckdb_external_resources",
        "duckdb_functions",
        "duckdb_grammar_extensions",
        "duckdb_indexes",
        "duckdb_keywords",
        "duckdb_live_query_metrics",
        "duckdb_log_contexts",
        "duckdb_logs",
        "duckdb_logs_parsed",
        "duckdb_memory",
        "duckdb_optimizers",
        "duckdb_prepared_statements",
        "duckdb_profiling_settings",
        "duckdb_schemas",
        "duckdb_secret_type_parameters",
        "duckdb_secret_types",
        "duckdb_secrets",
        "duckdb_sequences",
        "duckdb_settings",
        "duckdb_table_sample",
        "duckdb_tables",
        "duckdb_temporary_files",
        "duckdb_triggers",
        "duckdb_types",
        "duckdb_variables",
        "duckdb_views",
        "pragma_collations",
        "pragma_database_size",
        "pragma_metadata_info",
        "pragma_platform",
        "pragma_show",
        "pragma_storage_info",
        "pragma_table_info",
        "pragma_user_agent",
        "pragma_version",
        "read_parquet",
        "parquet_scan",
        "parquet_bloom_probe",
        "parquet_file_metadata",
        "parquet_full_metadata",
        "parquet_kv_metadata",
        "parquet_metadata",
        "parquet_page_index",
        "parquet_schema",
        "read_csv",
        "read_csv_auto",
        "sniff_csv",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "read_duckdb",
        "glob",
        "json_each",
        "json_tree",
        "range",
        "generate_series",
        "unnest",
        "repeat",
        "repeat_row",
        "summary",
        "query_table",
        "seq_scan",
        "histogram",
        "histogram_values",
        "icu_calendar_names",
        "pg_timezone_names",
        "test_all_types",
        "test_vector_types",
        "which_secret",
    }
)

#: How a read begins (the first word of a statement DuckDB calls MULTI).
_READ_STARTS = frozenset(
    {
        "select",
        "with",
        "from",
        "values",
        "table",
        "pivot",
        "pivot_wider",
        "pivot_longer",
        "unpivot",
        "summarize",
        "describe",
        "show",
        "(",
    }
)
#: Statements DuckDB runs inside a read (as a WITH clause's body).
_NESTED_WRITES = frozenset({"copy", "insert", "update", "delete", "merge"})


class _Token(NamedTuple):
    text: str
    kind: str  # DuckDB's token type: keyword, identifier, operator, string_const, ...
    start: int

    @property
    def word(self) -> str:
        """The token as a name: lower case, quotes removed."""
        if self.text.startswith('"') and self.text.endswith('"') and len(self.text) > 1:
            return self.text[1:-1].replace('""', '"').lower()
        return self.text.lower()


def check_read_only(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """Raise a clear error unless every statement of ``text`` only reads (see the module's text),
    or when it holds no statement (blank, ``;`` or only comments). ``con``: the connection the query
    will run on (parsing with the module-level function would first open DuckDB's default in-memory
    database: 20 ms of a command's start-up)."""
    statements = _parse(con, text)
    if not statements:
        raise BenchdbError('the query is empty; give a SQL statement such as "SELECT * FROM results_latest"')
    prepared: set[str] = set()
    kinds = [_kind(statement) for statement in statements]
    for i, statement in enumerate(statements):
        if not _pivot_type(statements, kinds, i):
            _check(con, kinds[i], statement.query, prepared)
    tokens = _tokens(text)  # the whole text: DuckDB before 1.3 keeps no text of a PIVOT's parts
    for token in tokens:
        if token.kind == "keyword" and token.word in _NESTED_WRITES:
            raise _refused(
                f"{token.word.upper()} inside a statement (in a WITH clause) is refused; "
                f'quote "{token.word}" where it names a column'
            )
    _check_table_functions(
        con,
        {
            token.word
            for token, after in zip(tokens, tokens[1:], strict=False)
            if after.text == "(" and token.kind in ("keyword", "identifier")
        },
    )


def _pivot_type(statements: list, kinds: list[str], i: int) -> bool:
    """Whether statement ``i`` is the ENUM type DuckDB before 1.3 creates for a PIVOT with no IN list:
    a CREATE with no text of its own, in a run of such CREATEs that a SELECT with no text ends
    (later versions keep the PIVOT one statement, ``MULTI``)."""
    j = i
    while j < len(statements) and kinds[j] == "CREATE" and not statements[j].query.strip():
        j += 1
    return j > i and j < len(statements) and kinds[j] == "SELECT" and not statements[j].query.strip()


def _refused(what: str) -> BenchdbError:
    return BenchdbError(f"{READ_ONLY}: {what}")


def _parse(con: duckdb.DuckDBPyConnection, text: str) -> list:
    from benchdb.startup import duckdb

    try:
        return con.extract_statements(text)
    except duckdb.Error as exc:
        raise BenchdbError(f"query failed: {clip(first_line(exc))}") from None


def _kind(statement) -> str:
    try:
        return statement.type.name
    except ValueError:  # a statement type the Python API has no name for (UPDATE EXTENSIONS)
        return "UNNAMED"


def _tokens(text: str) -> list[_Token]:
    """The tokens of ``text`` (one parsed statement), comments left out."""
    from benchdb.startup import duckdb

    found = duckdb.tokenize(text)
    tokens = []
    for i, (start, kind) in enumerate(found):
        if kind == duckdb.token_type.comment:
            continue
        end = found[i + 1][0] if i + 1 < len(found) else len(text)
        tokens.append(_Token(text[start:end].strip(), kind.name, start))
    return tokens


def _check(con: duckdb.DuckDBPyConnection, kind: str, query: str, prepared: set[str]) -> None:
    """Refuse ``query`` (one statement DuckDB parsed as ``kind``) unless it is a read; add the name
    it PREPAREs to ``prepared``."""
    tokens = _tokens(query)
    head = tokens[0].word if tokens else ""
    # named as written where DuckDB's kind is another's: INSTALL parses as LOAD, RESET as SET
    label = kind if head in ("with", "(", "") else head.upper()
    if kind == "MULTI":  # DuckDB does not show its parts: the first word says what it is
        kind = "SELECT" if head in _READ_STARTS else head.upper()
    elif kind == "CALL" and head != "call":  # CHECKPOINT and FORCE CHECKPOINT parse as CALL
        kind = label = " ".join(t.word for t in tokens[:2] if t.kind == "keyword").upper()
    if kind == "EXPLAIN":
        _check_inner(con, kind, query, _after_explain(query, tokens), prepared)
    elif kind == "PREPARE":
        name, inner = _prepared(query, tokens)
        _check_inner(con, kind, query, inner, prepared)
        prepared.add(name)
    elif kind == "EXECUTE":
        name = tokens[1].word if len(tokens) > 1 else ""
        if name not in prepared:
            raise _refused(
                f"EXECUTE {name} names no statement PREPAREd before it in the same query; "
                "PREPARE it there (a read) or write the statement itself"
            )
    elif kind not in ("SELECT", "CALL"):
        raise _refused(f'"{label}" is not a read statement; {_RUNS}')


def _check_inner(
    con: duckdb.DuckDBPyConnection, kind: str, query: str, candidates: list[str], prepared: set[str]
) -> None:
    """Check the statement an EXPLAIN or PREPARE holds: each way of reading where it begins that
    parses is checked, and one must parse."""
    from benchdb.startup import duckdb

    parsed = False
    for candidate in candidates:
        try:
            statements = con.extract_statements(candidate)
        except (duckdb.Error, ValueError):
            continue
        for statement in statements:
            parsed = True
            _check(con, _kind(statement), statement.query, prepared)
    if not parsed:
        raise _refused(f"cannot tell which statement this {kind} holds: {clip(query, 80)}")


def _after_explain(query: str, tokens: list[_Token]) -> list[str]:
    """Where the statement of ``EXPLAIN [ANALYZE] [(options)] statement`` may begin: a parenthesis
    opens either the options or the statement itself."""
    i = 1
    if i < len(tokens) and tokens[i].word == "analyze":
        i += 1
    if i >= len(tokens):
        return []
    found = [query[tokens[i].start :]]
    if tokens[i].text == "(":
        close = _closing(tokens, i)
        if close + 1 < len(tokens):
            found.append(query[tokens[close + 1].start :])
    return found


def _prepared(query: str, tokens: list[_Token]) -> tuple[str, list[str]]:
    """The name and the statement of ``PREPARE name [(types)] AS statement``."""
    depth = 0
    for i in range(2, len(tokens) - 1):
        depth += {"(": 1, ")": -1}.get(tokens[i].text, 0)
        if depth == 0 and tokens[i].word == "as":
            return tokens[1].word, [query[tokens[i + 1].start :]]
    return (tokens[1].word if len(tokens) > 1 else ""), []


def _closing(tokens: list[_Token], opening: int) -> int:
    """The index of the parenthesis closing the one at ``opening`` (the last token if none does)."""
    depth = 0
    for i in range(opening, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[i].text, 0)
        if depth == 0:
            return i
    return len(tokens) - 1


def _check_table_functions(con: duckdb.DuckDBPyConnection, called: set[str]) -> None:
    """Refuse a call of a table function :data:`READ_TABLE_FUNCTIONS` does not name. A name
    followed by a parenthesis may be a scalar function, a keyword or a table function: DuckDB's
    catalog says which."""
    unknown = sorted(called - READ_TABLE_FUNCTIONS)
    if not unknown:
        return
    found = sorted(r[0] for r in con.execute(sql.load("queries/table_functions.sql"), {"names": unknown}).fetchall())
    if found:
        raise _refused(
            f"table function {found[0]}() is refused: it is not one that only reads "
            "(such as read_parquet(), range(), duckdb_tables())"
        )
