-- speedup: every latest valid result against the baseline for the same model, batch size and
-- input shape: PyTorch, eager, fp32 on a CPU (one row per baseline CPU when there are several).
-- speedup > 1: faster than the baseline.
CREATE OR REPLACE VIEW speedup AS
SELECT r.model_id, r.batch_size, r.input_shape,
       r.hardware_name, r.hardware_id, r.backend, r.device, r.mode, r.precision,
       r.median                   AS median_s,
       b.hardware_name            AS baseline_hardware,
       b.median                   AS baseline_median_s,
       b.median / r.median        AS speedup,
       r.result_id,
       b.result_id                AS baseline_result_id
FROM results_latest r
JOIN results_latest b
  ON b.model_id = r.model_id AND b.batch_size = r.batch_size AND b.input_shape = r.input_shape
 AND b.backend = 'pytorch' AND b.mode = 'eager' AND b.precision = 'fp32' AND b.hardware_kind = 'cpu';
