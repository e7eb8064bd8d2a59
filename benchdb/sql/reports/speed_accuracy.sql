-- Report: speed against accuracy per precision. Each latest valid result that is not fp32 beside
-- its fp32 twin (the fp32_twin view: same model, batch, shape, hardware, backend, mode, threads):
-- its speedup (fp32 median / its median, > 1 is faster) with a 95 % interval where run-to-run
-- noise is known (the speedup view's rule: both in 2+ interleaved processes of one run, or both
-- series with 8+ runs), and its agreement with fp32 (result_accuracy) and the drop it means, and
-- the sentence-similarity score of both where the run had --sts (sts_spearman).
WITH pairs AS (
    SELECT r.model_id, r.batch_size, r.input_shape, r.hardware_name, r.backend, r.mode, r.precision,
           json_extract_string(r.options, '$.quantization') AS quantization,
           r.median, r.median_ci_low, r.median_ci_high, r.result_id,
           b.median AS fp32_median, b.median_ci_low AS b_ci_low, b.median_ci_high AS b_ci_high,
           b.result_id AS fp32_result_id,
           nr.noise AS r_noise, nb.noise AS b_noise,
           CASE WHEN nr.noise IS NOT NULL AND nb.noise IS NOT NULL THEN 'history'
                WHEN r.run_id = b.run_id AND r.ci_method = 'hierarchical_bootstrap'
                     AND b.ci_method = 'hierarchical_bootstrap' THEN 'processes' END AS basis,
           a.agreement_metric, a.agreement, a.score_drop, a.score_basis, a.sts_drop, a.accuracy_drop, a.accuracy_basis,
           rs.median AS sts_spearman, bs.median AS fp32_sts_spearman
    FROM fp32_twin t
    JOIN results_latest r ON r.result_id = t.result_id
    JOIN results_latest b ON b.result_id = t.fp32_result_id
    LEFT JOIN result_accuracy a ON a.result_id = r.result_id
    LEFT JOIN result_metrics rs ON rs.result_id = r.result_id AND rs.metric = 'sts_spearman'
    LEFT JOIN result_metrics bs ON bs.result_id = b.result_id AND bs.metric = 'sts_spearman'
    LEFT JOIN series_noise nr ON nr.series_id = r.series_id
    LEFT JOIN series_noise nb ON nb.series_id = b.series_id
    WHERE NOT bdb_serving_point(r.mode)
      AND ($models IS NULL OR list_contains($models, r.model_id))
      AND ($hardware IS NULL OR list_contains($hardware, r.hardware_name) OR list_contains($hardware, r.hardware_id))
),
intervals AS (
    SELECT *,
           fp32_median / median AS speedup,
           bdb_ratio_se(basis, median_ci_low, median_ci_high, b_ci_low, b_ci_high, r_noise, b_noise) AS se
    FROM pairs
)
SELECT model_id, batch_size, input_shape, hardware_name, backend, mode, precision, quantization,
       median AS median_s, fp32_median AS fp32_median_s, speedup,
       exp(ln(speedup) - 1.96 * se) AS speedup_ci_low,
       exp(ln(speedup) + 1.96 * se) AS speedup_ci_high,
       basis AS speedup_basis,
       agreement_metric, agreement, score_drop, score_basis, sts_drop, accuracy_drop, accuracy_basis,
       sts_spearman, fp32_sts_spearman, result_id, fp32_result_id
FROM intervals
ORDER BY model_id, batch_size, input_shape, hardware_name, backend, mode, precision, quantization
