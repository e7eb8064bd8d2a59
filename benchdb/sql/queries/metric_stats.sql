-- Statistics of every (scenario, metric) in the relation stage_samples
-- (columns scenario_id, metric, unit, value). The one definition used by ingest
-- (into results / result_metrics, with stage_samples defined over the batch's files),
-- by a runner's terminal summary, and by the timing loop's stopping rule.
-- One sort per group serves the median, every percentile and the CI of the median.
SELECT scenario_id,
       metric,
       unit,
       n,
       mean,
       bdb_list_quantile(sorted_values, 0.5)                                          AS median,
       min,
       max,
       stddev,
       CASE WHEN n >= bdb_pct_min_n(0.25) THEN bdb_list_quantile(sorted_values, 0.25) END AS p25,
       CASE WHEN n >= bdb_pct_min_n(0.75) THEN bdb_list_quantile(sorted_values, 0.75) END AS p75,
       CASE WHEN n >= bdb_pct_min_n(0.90) THEN bdb_list_quantile(sorted_values, 0.90) END AS p90,
       CASE WHEN n >= bdb_pct_min_n(0.95) THEN bdb_list_quantile(sorted_values, 0.95) END AS p95,
       CASE WHEN n >= bdb_pct_min_n(0.99) THEN bdb_list_quantile(sorted_values, 0.99) END AS p99,
       bdb_median_ci_low(sorted_values)                                               AS median_ci_low,
       bdb_median_ci_high(sorted_values)                                              AS median_ci_high
FROM (
    SELECT scenario_id,
           metric,
           any_value(unit)          AS unit,
           count(*)                 AS n,
           avg(value)               AS mean,
           min(value)               AS min,
           max(value)               AS max,
           stddev_samp(value)       AS stddev,
           list_sort(list(value))   AS sorted_values
    FROM stage_samples
    GROUP BY scenario_id, metric
) AS g
