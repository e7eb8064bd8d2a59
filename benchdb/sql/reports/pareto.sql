-- Report: latency against throughput of every latest valid result (results_latest) under the filters,
-- per model and input shape: the points of the latency-throughput (Pareto) plot.
SELECT model_id, input_shape, batch_size, hardware_name, backend, mode, precision, median AS latency_s,
       median_ci_low AS latency_ci_low_s, median_ci_high AS latency_ci_high_s, throughput, result_id
FROM results_latest
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, input_shape, latency_s
