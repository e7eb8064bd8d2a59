"""benchdb's statistics SQL run over in-memory data: what a runner prints and its stopping rule
decides on are the numbers the warehouse will hold."""

from __future__ import annotations

from benchdb.sql import install_macros, metric_stats_query, rows


class Stats:
    """benchdb's statistics SQL over in-memory data (a runner's summary, the stopping rule).

    The same ``queries/metric_stats.sql`` that ingest runs over a batch's files, so the numbers a
    runner prints are the numbers the warehouse will hold.
    """

    def __init__(self) -> None:
        import duckdb

        self.con = duckdb.connect()
        install_macros(self.con)
        self._query = metric_stats_query()

    def compute(self, table) -> list[dict]:
        """Statistics per (scenario_id, metric) of an Arrow table with columns
        scenario_id, metric, unit, value."""
        self.con.register("stage_samples", table)
        try:
            return rows(self.con.execute(self._query + " ORDER BY scenario_id, metric"))
        finally:
            self.con.unregister("stage_samples")

    def order_statistics_median_ci(self, values) -> tuple[float | None, float | None, float | None]:
        """(median, CI low, CI high) of one sequence of numbers (one process's samples): the 95 %
        distribution-free interval from binomial order statistics (``bdb_median_ci_low/high`` in
        macros.sql, ``ci_method = 'order_statistics'``), as the warehouse computes it. It sees
        only the variation within the sequence; across processes see
        :func:`benchdb.analysis.hierarchy.hierarchical_median_ci`. CI bounds are None with too few
        values; all three None for an empty sequence."""
        import pyarrow as pa

        n = len(values)
        table = pa.table(
            {
                "scenario_id": pa.array([""] * n),
                "metric": pa.array([""] * n),
                "unit": pa.array([""] * n),
                "value": pa.array(values, type=pa.float64()),
            }
        )
        rows = self.compute(table)
        if not rows:
            return None, None, None
        return rows[0]["median"], rows[0]["median_ci_low"], rows[0]["median_ci_high"]

    def close(self) -> None:
        self.con.close()
