"""benchdb on Apache Spark: the same views and reports over a Hive-partitioned Parquet export.

- :func:`export_partitioned` (``benchdb export --partitioned DIR_OR_URL``) writes the warehouse as
  Hive-partitioned Parquet (results and samples by hardware and month of the run), appendable.
- :mod:`benchdb.spark.translate` turns benchdb's DuckDB SQL (views, macros, report queries) into
  Spark SQL with sqlglot (``benchdb sql --dialect spark``).
- :func:`register` puts the tables and views on an existing SparkSession; :class:`SparkConnection`
  runs the report builder's SQL on Spark (``benchdb report --engine spark --data DIR``).

Importing this package imports neither pyspark nor duckdb; the functions do, when called.
"""

from __future__ import annotations


def export_partitioned(db, dest, **kw):
    from benchdb.spark.partitioned_export import export_partitioned as run

    return run(db, dest, **kw)


def register(spark, data, **kw):
    from benchdb.spark.session import register as run

    return run(spark, data, **kw)


def __getattr__(name):
    if name == "SparkConnection":
        import importlib

        return importlib.import_module("benchdb.spark.session").SparkConnection
    raise AttributeError(name)


__all__ = ["export_partitioned", "register", "SparkConnection"]
