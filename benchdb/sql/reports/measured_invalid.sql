-- Report: results that ran (status ok) but are invalid, as the latest timing attempt of their series
-- (results_current) under the filters: what was measured, flagged, with why it is left out of the
-- rankings and how far its tail sits from its median. At most $limit rows, the worst tails first.
SELECT result_id, model_id, batch_size, input_shape, hardware_name, backend, mode, precision, n, repeats,
       median AS median_s, p90 AS p90_s, p99 AS p99_s, p90 / nullif(median, 0) AS p90_over_median,
       throughput, validity, validity_reasons, background_cpu_pct
FROM results_current
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
  AND status = 'ok' AND NOT (validity = 'valid' AND unit = 's')
ORDER BY p90 / nullif(median, 0) DESC NULLS LAST, model_id, batch_size, hardware_name, backend, result_id
LIMIT $limit
