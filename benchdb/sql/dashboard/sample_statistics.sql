-- Dashboard: what a result is (its scenario) and the statistics of each of its metrics, one row per
-- metric; the samples page shows them beside the raw samples. Bound to NULL: every result's. The last two
-- columns rebuild the `benchdb run` line (reports.drilldown.reproduce_command), not shown as statistics.
SELECT r.result_id, r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size, r.input_shape,
       r.series_id, r.threads, r.repeats, r.status, r.validity, m.metric, m.unit, m.n, m.median,
       m.median_ci_low, m.median_ci_high, m.mean, m.stddev, m.min, m.p90, m.p99, m.max,
       CAST(r.options AS VARCHAR) AS options_json, CAST(ru.config AS VARCHAR) AS run_config
FROM results r
JOIN runs ru USING (run_id)
LEFT JOIN result_metrics m USING (result_id)
WHERE ($result IS NULL OR r.result_id = $result)
ORDER BY r.result_id, m.metric = r.metric DESC, m.metric
