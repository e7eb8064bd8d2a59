-- Dashboard: the latest valid result of every series (results_latest) under the filters, with
-- its series (the link to its history) and its result (the link to its raw samples); $run: those of
-- one run (its results that are still the latest of their series).
SELECT r.result_id, r.series_id, r.model_id, a.family, r.backend, r.device, r.mode, r.precision, r.batch_size,
       r.input_shape, r.hardware_name, r.metric, r.unit, r.n, r.median, r.median_ci_low, r.median_ci_high,
       r.throughput, r.run_started_at, r.git_commit, r.run_id
FROM results_latest r
LEFT JOIN architectures a USING (arch_id)
WHERE ($model IS NULL OR r.model_id = $model)
  AND ($hardware IS NULL OR r.hardware_name = $hardware)
  AND ($backend IS NULL OR r.backend = $backend)
  AND ($family IS NULL OR a.family = $family)
  AND ($run IS NULL OR r.run_id = $run)
ORDER BY r.model_id, r.hardware_name, r.backend, r.mode, r.precision, r.batch_size, r.input_shape, r.result_id
