-- Dashboard: the best hardware and backend per model, batch size and input shape (bdb_optimal_per)
-- for an objective (throughput, latency, energy) under an optional latency limit, a throughput taken
-- per system, per accelerator or per watt ($per), with the margin over the runner-up and its verdict
-- (win / tie / unconfirmed), under the filters. Each side's system, accelerators, nodes, whether its
-- accelerators are of more than one kind (heterogeneous), whether its figure is published
-- (summary-only: no samples, no interval) and who submitted it. The best and the runner-up are rows of
-- system_results, one per result: their nodes, accelerator (system_results': the hardware's device
-- unless a CPU) and options are read from results and hardware by id rather than from that view again.
SELECT o.model_id, a.family, o.batch_size, o.input_shape, o.objective, o.per, o.unit, o.candidates,
       o.best_hardware, o.best_backend, o.best_mode, o.best_precision, o.best_value, o.best_median_s,
       o.runner_up_hardware, o.runner_up_backend, o.runner_up_value, o.margin, o.margin_ci_low, o.margin_ci_high,
       o.margin_verdict, o.margin_basis, o.best_result_id, o.runner_up_result_id,
       o.best_system, o.best_accelerators, bh.nodes AS best_nodes,
       coalesce(regexp_matches(CASE WHEN bh.kind = 'cpu' THEN NULL ELSE bh.device_name END, '\(x\d+\),'), false)
           AS best_heterogeneous,
       o.best_summary_only, b.options ->> 'submitter' AS best_submitter,
       o.runner_up_system, o.runner_up_accelerators, o.runner_up_summary_only,
       r.options ->> 'submitter' AS runner_up_submitter
FROM bdb_optimal_per(coalesce($objective, 'throughput'), coalesce($per, 'system'),
                     TRY_CAST($max_latency_ms AS DOUBLE) / 1000, NULL,
                     MAP {}::MAP(VARCHAR, DOUBLE), MAP {}::MAP(VARCHAR, DOUBLE),
                     CASE WHEN $model IS NULL THEN NULL::VARCHAR[] ELSE [$model] END, NULL::VARCHAR[], NULL) o
LEFT JOIN (SELECT DISTINCT model_id, family FROM architectures) a USING (model_id)
LEFT JOIN results b ON b.result_id = o.best_result_id
LEFT JOIN hardware bh ON bh.hardware_id = b.hardware_id
LEFT JOIN results r ON r.result_id = o.runner_up_result_id
WHERE ($family IS NULL OR a.family = $family)
  AND ($batch IS NULL OR o.batch_size = TRY_CAST($batch AS INTEGER))
  AND ($precision IS NULL OR o.best_precision = $precision)
ORDER BY o.model_id, o.batch_size, o.input_shape, o.unit
