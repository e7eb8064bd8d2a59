INSERT INTO result_metrics BY NAME
SELECT scenario_id AS result_id, metric, unit, n, mean, median, min, max, stddev,
       p25, p75, p90, p95, p99, median_ci_low, median_ci_high
FROM stage_stats
