-- Dashboard: per-scenario histograms of two runs. For the (at most 12) scenarios whose median
-- changed most between run $base and run $cand (as in compare.sql), every raw sample of each
-- side's primary metric, as a fraction of the base median (0 = the base median), so scenarios of
-- different speeds share one axis.
WITH pairs AS (
    SELECT b.series_id, b.model_id, b.backend, b.batch_size, b.input_shape, b.metric,
           b.result_id AS base_result_id, c.result_id AS cand_result_id, b.median AS base_median,
           c.median / b.median - 1 AS change
    FROM results b
    JOIN results c ON c.series_id = b.series_id
    WHERE b.run_id = $base AND c.run_id = $cand
      AND b.status = 'ok' AND c.status = 'ok' AND b.validity = 'valid' AND c.validity = 'valid'
      AND bdb_timing_metric(b.metric) AND b.unit = 's' AND b.median > 0
    ORDER BY abs(change) DESC, b.series_id
    LIMIT 12
), sides AS (
    SELECT series_id, model_id, backend, batch_size, input_shape, metric, base_median, change,
           'base' AS side, base_result_id AS result_id FROM pairs
    UNION ALL
    SELECT series_id, model_id, backend, batch_size, input_shape, metric, base_median, change,
           'candidate' AS side, cand_result_id AS result_id FROM pairs
)
SELECT p.series_id, p.model_id, p.backend, p.batch_size, p.input_shape, p.change, p.side,
       s.value / p.base_median - 1 AS relative
FROM sides p
JOIN samples s ON s.result_id = p.result_id AND s.metric = p.metric
ORDER BY abs(p.change) DESC, p.series_id, p.side
