-- Statistics of every (scenario, metric) group in the relation stat_groups (columns scenario_id,
-- metric, unit, g = bdb_group_values(value) of the group's samples). The one definition used by
-- ingest (into results / result_metrics: stat_groups from batch_stat_groups.sql), by a runner's
-- terminal summary and the timing loop's stopping rule, and by Spark (stat_groups from
-- stat_groups.sql over a relation stage_samples).
-- One sort per group serves the median, every percentile and the CI of the median.
SELECT scenario_id,
       metric,
       unit,
       g.n                                                                              AS n,
       g.mean                                                                           AS mean,
       bdb_list_quantile(g.sorted_values, 0.5)                                          AS median,
       g.min                                                                            AS min,
       g.max                                                                            AS max,
       g.stddev                                                                         AS stddev,
       CASE WHEN g.n >= bdb_pct_min_n(0.25) THEN bdb_list_quantile(g.sorted_values, 0.25) END AS p25,
       CASE WHEN g.n >= bdb_pct_min_n(0.75) THEN bdb_list_quantile(g.sorted_values, 0.75) END AS p75,
       CASE WHEN g.n >= bdb_pct_min_n(0.90) THEN bdb_list_quantile(g.sorted_values, 0.90) END AS p90,
       CASE WHEN g.n >= bdb_pct_min_n(0.95) THEN bdb_list_quantile(g.sorted_values, 0.95) END AS p95,
       CASE WHEN g.n >= bdb_pct_min_n(0.99) THEN bdb_list_quantile(g.sorted_values, 0.99) END AS p99,
       bdb_median_ci_low(g.sorted_values)                                               AS median_ci_low,
       bdb_median_ci_high(g.sorted_values)                                              AS median_ci_high
FROM stat_groups
