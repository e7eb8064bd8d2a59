-- Dashboard: each serving configuration's Pareto front of output-token throughput per device
-- against interactivity (serving_frontier), under the model and hardware filters.
SELECT result_id, model_id, endpoint, input_shape, hardware_name, engine, measured_by, precision, options_id, load_kind, load_value,
       output_throughput_per_device, interactivity, ttft_p50_s, tpot_p50_s, on_overall_front
FROM serving_frontier
WHERE ($model IS NULL OR model_id = $model)
  AND ($hardware IS NULL OR hardware_name = $hardware)
ORDER BY model_id, endpoint, in_tokens, out_tokens, hardware_name, engine, interactivity
