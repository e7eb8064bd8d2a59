-- Raw samples of the exported results, per (result, metric) in measurement order, with the
-- statistics benchdb computed from them at ingest (result_metrics).
SELECT s.result_id, s.metric, any_value(s.unit) AS unit,
       list(s.value ORDER BY s.repeat, s.iteration) AS vals,
       any_value(m.median) AS median, any_value(m.mean) AS mean, any_value(m.n) AS n,
       any_value(m.p90) AS p90, any_value(m.p95) AS p95,
       any_value(m.p99) AS p99, any_value(m.stddev) AS stddev
FROM samples s
LEFT JOIN result_metrics m ON m.result_id = s.result_id AND m.metric = s.metric
WHERE list_contains($ids, s.result_id)
GROUP BY s.result_id, s.metric
ORDER BY s.result_id, s.metric
