-- Dashboard: two runs side by side, per scenario measured validly in both (same series): each
-- side's median with its 95 % CI and the change (cand / base - 1). change_low/high: the interval
-- the two medians' CIs allow (cand low / base high - 1 .. cand high / base low - 1): conservative,
-- not the gate's bootstrap verdict (`benchdb check --baseline BASE --candidate CAND` gives that).
SELECT b.series_id, b.model_id, b.backend, b.device, b.mode, b.precision, b.batch_size, b.input_shape,
       h.device_name AS hardware_name, b.metric,
       b.median AS base_median, b.median_ci_low AS base_ci_low, b.median_ci_high AS base_ci_high,
       c.median AS cand_median, c.median_ci_low AS cand_ci_low, c.median_ci_high AS cand_ci_high,
       c.median / b.median - 1                   AS change,
       c.median_ci_low / b.median_ci_high - 1    AS change_low,
       c.median_ci_high / b.median_ci_low - 1    AS change_high,
       b.result_id AS base_result_id, c.result_id AS cand_result_id
FROM results b
JOIN results c ON c.series_id = b.series_id
JOIN hardware h ON h.hardware_id = b.hardware_id
WHERE b.run_id = $base AND c.run_id = $cand
  AND b.status = 'ok' AND c.status = 'ok' AND b.validity = 'valid' AND c.validity = 'valid'
  AND bdb_timing_metric(b.metric) AND b.unit = 's' AND b.median > 0
ORDER BY change DESC, b.model_id, b.series_id
