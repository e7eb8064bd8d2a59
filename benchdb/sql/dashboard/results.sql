-- Dashboard: the latest valid result of every series (results_latest) under the filters, with
-- its series (the link to its history) and its result (the link to its raw samples).
SELECT result_id, series_id, model_id, backend, device, mode, precision, batch_size, input_shape,
       hardware_name, metric, unit, n, median, median_ci_low, median_ci_high, throughput,
       run_started_at, git_commit
FROM results_latest
WHERE ($model IS NULL OR model_id = $model)
  AND ($hardware IS NULL OR hardware_name = $hardware)
  AND ($backend IS NULL OR backend = $backend)
ORDER BY model_id, hardware_name, backend, mode, precision, batch_size, input_shape, result_id
