-- speedup: every latest valid result against the baseline for the same model, batch size and
-- input shape: PyTorch, eager, fp32 on a CPU (one row per baseline CPU when there are several).
-- speedup > 1: faster than the baseline.
-- How sure, by the rule of bdb_optimal's margins and the gate: speedup_ci_low/high only where
-- run-to-run noise is known (speedup_basis 'processes': both ran in 2+ interleaved processes of
-- one run; 'history': both series have 8+ runs, their noise added); speedup_verdict 'faster' (the
-- whole interval above 1.05), 'slower' (below 1/1.05), 'same' (it includes 1, or lies within
-- 1/1.05 .. 1.05), 'unconfirmed' (no interval, or one between), 'baseline' (the baseline itself).
CREATE OR REPLACE VIEW speedup AS
WITH pairs AS (
    SELECT r.*, b.hardware_name AS b_hardware_name, b.median AS b_median, b.result_id AS b_result_id,
           b.run_id AS b_run_id, b.ci_method AS b_ci_method,
           b.median_ci_low AS b_ci_low, b.median_ci_high AS b_ci_high,
           nr.noise AS r_noise, nb.noise AS b_noise,
           CASE WHEN r.result_id = b.result_id THEN NULL
                WHEN nr.noise IS NOT NULL AND nb.noise IS NOT NULL THEN 'history'
                WHEN r.run_id = b.run_id AND r.ci_method = 'hierarchical_bootstrap'
                     AND b.ci_method = 'hierarchical_bootstrap' THEN 'processes' END AS basis
    FROM results_latest r
    JOIN results_latest b
      ON b.model_id = r.model_id AND b.batch_size = r.batch_size AND b.input_shape = r.input_shape
     AND b.backend = 'pytorch' AND b.mode = 'eager' AND b.precision = 'fp32' AND b.hardware_kind = 'cpu'
    LEFT JOIN series_noise nr ON nr.series_id = r.series_id
    LEFT JOIN series_noise nb ON nb.series_id = b.series_id
    WHERE NOT bdb_serving_point(r.mode)
),
intervals AS (
    SELECT *,
           b_median / median AS ratio,
           bdb_ratio_se(basis, median_ci_low, median_ci_high, b_ci_low, b_ci_high, r_noise, b_noise) AS se
    FROM pairs
)
SELECT model_id, batch_size, input_shape,
       hardware_name, hardware_id, backend, device, mode, precision,
       median                     AS median_s,
       b_hardware_name            AS baseline_hardware,
       b_median                   AS baseline_median_s,
       ratio                      AS speedup,
       result_id,
       b_result_id                AS baseline_result_id,
       exp(ln(ratio) - 1.96 * se) AS speedup_ci_low,
       exp(ln(ratio) + 1.96 * se) AS speedup_ci_high,
       basis                      AS speedup_basis,
       CASE WHEN result_id = b_result_id THEN 'baseline'
            WHEN se IS NULL THEN 'unconfirmed'
            WHEN exp(ln(ratio) - 1.96 * se) > 1.05 THEN 'faster'
            WHEN exp(ln(ratio) + 1.96 * se) < 1 / 1.05 THEN 'slower'
            WHEN exp(ln(ratio) - 1.96 * se) <= 1 AND exp(ln(ratio) + 1.96 * se) >= 1 THEN 'same'
            WHEN exp(ln(ratio) - 1.96 * se) >= 1 / 1.05 AND exp(ln(ratio) + 1.96 * se) <= 1.05 THEN 'same'
            ELSE 'unconfirmed' END AS speedup_verdict
FROM intervals;
