-- The serving load points to export as llm-d Benchmark Reports (benchdb export --format llm-d):
-- every measured point of serving_points (benchdb's own, or imported with its requests) under the
-- model filter, with the distribution of each per-request metric over its completed requests
-- (TTFT, TPOT, ITL per token, E2E in seconds; input and output tokens): mean, population standard
-- deviation, min, max and linear percentiles, the Statistics an llm-d report holds.
WITH pts AS (
    SELECT * FROM serving_points WHERE $models IS NULL OR list_contains($models, model_id)
),
dist AS (
    SELECT s.result_id, s.metric,
           avg(s.value) AS mean, stddev_pop(s.value) AS stddev, min(s.value) AS min, max(s.value) AS max,
           quantile_cont(s.value, 0.5) AS p50, quantile_cont(s.value, 0.9) AS p90,
           quantile_cont(s.value, 0.95) AS p95, quantile_cont(s.value, 0.99) AS p99
    FROM samples s
    WHERE s.result_id IN (SELECT result_id FROM pts)
      AND s.metric IN ('ttft_s', 'tpot_s', 'itl_token_s', 'e2e_s', 'input_tokens', 'output_tokens')
    GROUP BY s.result_id, s.metric
)
SELECT p.result_id, p.series_id, p.model_id, p.hardware_name, p.devices, p.engine, p.engine_version, p.precision,
       p.measured_by, p.load_kind, p.concurrency, p.request_rate, p.arrival, p.in_tokens, p.out_tokens,
       p.n_requests, p.errors, p.window_s, p.run_started_at, p.input_shape,
       p.output_throughput, p.total_throughput, p.input_throughput, p.request_throughput,
       list(struct_pack(metric := d.metric, mean := d.mean, stddev := d.stddev, min := d.min, max := d.max,
                        p50 := d.p50, p90 := d.p90, p95 := d.p95, p99 := d.p99) ORDER BY d.metric) AS distributions
FROM pts p
LEFT JOIN dist d USING (result_id)
GROUP BY ALL
ORDER BY p.model_id, p.hardware_name, p.engine, p.input_shape, p.result_id
