-- Dashboard: the best hardware and backend per model, batch size and input shape (bdb_optimal)
-- for an objective (throughput, latency, energy) under an optional latency limit, with the
-- margin over the runner-up and its verdict (win / tie / unconfirmed), under the filters.
SELECT o.model_id, a.family, o.batch_size, o.input_shape, o.objective, o.unit, o.candidates,
       o.best_hardware, o.best_backend, o.best_mode, o.best_precision, o.best_value, o.best_median_s,
       o.runner_up_hardware, o.runner_up_backend, o.runner_up_value, o.margin, o.margin_ci_low, o.margin_ci_high,
       o.margin_verdict, o.margin_basis, o.best_result_id, o.runner_up_result_id
FROM bdb_optimal(coalesce($objective, 'throughput'), TRY_CAST($max_latency_ms AS DOUBLE) / 1000, NULL,
                 MAP {}::MAP(VARCHAR, DOUBLE),
                 CASE WHEN $model IS NULL THEN NULL::VARCHAR[] ELSE [$model] END, NULL::VARCHAR[]) o
LEFT JOIN (SELECT DISTINCT model_id, family FROM architectures) a USING (model_id)
WHERE ($family IS NULL OR a.family = $family)
  AND ($batch IS NULL OR o.batch_size = TRY_CAST($batch AS INTEGER))
  AND ($precision IS NULL OR o.best_precision = $precision)
ORDER BY o.model_id, o.batch_size, o.input_shape
