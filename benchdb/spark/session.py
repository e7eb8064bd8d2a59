"""benchdb on an existing SparkSession: the exported tables, the translated views, and a connection
adapter that runs benchdb's report SQL unchanged (``benchdb report --engine spark --data DIR``).

    from pyspark.sql import SparkSession
    from benchdb.spark import register
    spark = SparkSession.builder.getOrCreate()
    register(spark, "s3a://bucket/benchdb")          # temporary views: results, samples, ..., trends
    spark.sql("SELECT * FROM optimal_hardware").show()
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, cast

from benchdb.errors import BenchdbError, first_line

if TYPE_CHECKING:
    import duckdb


def _spark_path(data: str, root: str, fs) -> str:
    """The path Spark reads: the URL as given for remote stores, an absolute path for local ones."""
    if type(fs).__name__ == "LocalFileSystem":
        return root
    return data.rstrip("/")


def register(spark, data: str, *, views: bool = True, skipped: list | None = None) -> list[str]:
    """Register the tables of a `benchdb export --partitioned` folder/URL as temporary views on
    ``spark``, then benchdb's views translated to Spark SQL. Returns the names registered. A view
    with no Spark form (:class:`~benchdb.spark.translate.UntranslatableSQL`) is left out: its
    (name, reason) is appended to ``skipped`` and a warning names it.

    Columns come in the warehouse's order and types (from the export's manifest), so ``r.*`` in a
    view gives the same columns as DuckDB; the partition-only column ``run_month`` is left out.
    The views read the tables registered here (register again, with views, to move them to others)."""
    from benchdb.spark import partitioned_export, translate

    fs, root, _ = partitioned_export.filesystem(str(data))
    manifest = partitioned_export.read_manifest(fs, root)
    if manifest is None:
        raise BenchdbError(
            f"{data} is not a `benchdb export --partitioned` folder (no "
            f"{partitioned_export.MANIFEST}); write one with `benchdb export --partitioned {data}`"
        )
    base = _spark_path(str(data), root, fs)
    spark.conf.unset(_REGISTERED)  # set again below once every name is in place
    names = []
    for table, info in manifest["tables"].items():
        ddl = ", ".join(f"`{c}` {t}" for c, t in info["columns"])
        folder = posixpath.join(base, table) if "://" not in base else base + "/" + table
        if fs.exists(posixpath.join(root, table)) and fs.find(posixpath.join(root, table)):
            df = spark.read.schema(ddl).option("basePath", folder).parquet(folder)
        else:
            df = spark.createDataFrame([], ddl)
        df.select(*[f"`{c}`" for c in info["table_columns"]]).createOrReplaceTempView(table)
        names.append(table)
    for table, ddl in partitioned_export.LATER_TABLES.items():
        if table not in manifest["tables"]:  # exported by an earlier benchdb: none then
            spark.createDataFrame([], ddl).createOrReplaceTempView(table)
            names.append(table)
    if views:
        import warnings

        left: list = []
        stmts = translate.views(left)
        for view, why in left:
            warnings.warn(f"benchdb view {view} is not registered on Spark: {why}", stacklevel=2)
        if skipped is not None:
            skipped.extend(left)
        _create_views(spark, stmts)
        names.extend(stmt.name for stmt in stmts)
    spark.conf.set(_REGISTERED, _registration(base, manifest, names))
    return names


#: A temporary view keeps its analyzed plan instead of its SQL text: Spark otherwise parses and
#: analyzes the SQL of every view a view reads, recursively, at each reference (optimal_hardware
#: reads system_results twice, which reads results_latest, ...), seconds per query and per view
#: created. The views are bound to the tables registered with them, which register() does anyway.
_STORE_PLAN = "spark.sql.legacy.storeAnalyzedPlanForView"


def _create_views(spark, stmts) -> None:
    before = spark.conf.get(_STORE_PLAN, None)
    spark.conf.set(_STORE_PLAN, "true")
    try:
        for stmt in stmts:
            try:
                spark.sql(stmt.text)
            except Exception as exc:  # a Spark analysis error: name the view, one line
                first = first_line(exc)
                raise BenchdbError(f"Spark refused the view {stmt.name} ({stmt.source}): {first}") from None
    finally:
        if before is None:
            spark.conf.unset(_STORE_PLAN)
        else:
            spark.conf.set(_STORE_PLAN, before)


#: The session's last complete registration (export, manifest, names), so that report() can reuse it.
_REGISTERED = "benchdb.spark.registered"


def _registration(base: str, manifest: dict, names: list[str]) -> str:
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()
    return json.dumps({"data": base, "manifest": digest, "names": names})


def registered(spark, data: str) -> bool:
    """Whether ``spark`` already holds a complete registration of ``data`` as it is now (the same
    manifest: no export since) with every view still there: registering again costs seconds of
    Spark analysis for the same result."""
    import json

    from benchdb.spark import partitioned_export, translate

    held = spark.conf.get(_REGISTERED, None)
    if not held:
        return False
    fs, root, _ = partitioned_export.filesystem(str(data))
    manifest = partitioned_export.read_manifest(fs, root)
    names = json.loads(held)["names"]
    views = {s.name for s in translate.views([])}
    if manifest is None or not views <= set(names):
        return False
    if held != _registration(_spark_path(str(data), root, fs), manifest, names):
        return False
    return all(spark.catalog.tableExists(n) for n in names)


class _Cursor:
    def __init__(self, columns: list[str], rows: list[tuple]):
        self.description = [(c, None, None, None, None, None, None) for c in columns]
        self._rows = rows

    def fetchall(self) -> list[tuple]:
        return list(self._rows)

    def fetchone(self):
        return self._rows[0] if self._rows else None


class SparkConnection:
    """What benchdb's report builder needs of a DuckDB connection (``execute(text, params)``
    returning ``description`` / ``fetchall`` / ``fetchone``), on Spark: the DuckDB SQL text is
    translated (cached per text) and ``$name`` parameters are bound as Spark named parameters
    (``spark.sql(text, args=...)``), never formatted into the SQL."""

    def __init__(self, spark):
        self.spark = spark

    def execute(self, text: str, params: dict[str, Any] | None = None) -> _Cursor:
        from benchdb.spark import translate

        spark_sql = translate.translate_query(text)
        args = {k: _arg(v) for k, v in (params or {}).items() if f":{k}" in spark_sql}
        df = self.spark.sql(spark_sql, args=args or None)
        rows = df.collect()
        return _Cursor(list(df.columns), [tuple(_py(v) for v in r) for r in rows])

    def close(self) -> None:
        pass


def _arg(value):
    """A Python value as a Spark parameter: lists as typed arrays (an empty or None one too)."""
    from pyspark.sql import functions as F

    if isinstance(value, (list, tuple)):
        if all(isinstance(v, str) for v in value):
            return F.array(*[F.lit(v) for v in value])  # typed by the SQL's CAST
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return F.array(*[F.lit(float(v)) for v in value])
        raise BenchdbError(f"Spark parameter: a list of {sorted({type(v).__name__ for v in value})} is not supported")
    if value is None:
        return F.lit(None)
    return F.lit(value)


def _py(v):
    """Spark Row values as DuckDB's Python values (Rows -> dicts, Decimals stay Decimals)."""
    from pyspark.sql import Row

    if isinstance(v, Row):
        return {k: _py(x) for k, x in v.asDict().items()}
    if isinstance(v, list):
        return [_py(x) for x in v]
    return v


def session(app: str = "benchdb", master: str | None = None):
    """A SparkSession for benchdb on one machine: UTC, 2 shuffle partitions, no UI. On a cluster,
    use the session spark-submit gives you (SparkSession.builder.getOrCreate())."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise BenchdbError("--engine spark needs pyspark (and Java 17): pip install 'benchdb[spark]'") from None
    b = SparkSession.builder.appName(app)
    if master:
        b = b.master(master)
    spark = (
        b.config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("FATAL")  # errors reach the caller as exceptions
    return spark


def report(data: str, kinds: list[str], filters, spark=None, **options):
    """benchdb's report (benchdb.reports.build.build) computed by Spark over an export; ``options``
    go to build (e.g. detail=True for the HTML drill-down). A session that already holds this
    export's registration (:func:`registered`) is used as it is."""
    import warnings

    from benchdb.reports import build

    spark = spark or session(master="local[*]")
    if not registered(spark, data):  # e.g. a notebook's session, registered by an earlier report
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # views with no Spark form: no report reads them
            register(spark, data)
    # SparkConnection has the part of a DuckDB connection that build uses (execute, description, fetch*)
    con = cast("duckdb.DuckDBPyConnection", SparkConnection(spark))
    return build.build(con, str(data), kinds, filters, **options)
