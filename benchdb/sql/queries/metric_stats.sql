-- Statistics of every (scenario, metric) in the relation stage_samples
-- (columns scenario_id, metric, unit, value). The one definition used by ingest
-- (into results / result_metrics), by a runner's terminal summary, and by the
-- timing loop's stopping rule.
WITH g AS (
    SELECT scenario_id,
           metric,
           any_value(unit)                                              AS unit,
           count(*)                                                     AS n,
           avg(value)                                                   AS mean,
           min(value)                                                   AS min,
           max(value)                                                   AS max,
           stddev_samp(value)                                           AS stddev,
           quantile_cont(value, [0.25, 0.5, 0.75, 0.9, 0.95, 0.99])     AS q,
           list_sort(list(value))                                       AS sorted_values
    FROM stage_samples
    GROUP BY scenario_id, metric
)
SELECT scenario_id,
       metric,
       unit,
       n,
       mean,
       q[2]                                                             AS median,
       min,
       max,
       stddev,
       CASE WHEN n >= bdb_pct_min_n(0.25) THEN q[1] END                 AS p25,
       CASE WHEN n >= bdb_pct_min_n(0.75) THEN q[3] END                 AS p75,
       CASE WHEN n >= bdb_pct_min_n(0.90) THEN q[4] END                 AS p90,
       CASE WHEN n >= bdb_pct_min_n(0.95) THEN q[5] END                 AS p95,
       CASE WHEN n >= bdb_pct_min_n(0.99) THEN q[6] END                 AS p99,
       bdb_median_ci_low(sorted_values)                                 AS median_ci_low,
       bdb_median_ci_high(sorted_values)                                AS median_ci_high
FROM g
