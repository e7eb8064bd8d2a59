-- Dashboard: the serving frontier, under the model and hardware filters: each configuration's
-- measured Pareto front of output-token throughput per accelerator against interactivity (tokens/s
-- per user) from serving_frontier, with the interactivity's 95 % CI, beside the load points a source
-- only published (serving_published_points: summary figures, no interval; published = true).
SELECT result_id, model_id, endpoint, input_shape, hardware_name, engine, measured_by, precision, options_id,
       load_kind, load_value, output_throughput_per_device, interactivity, interactivity_ci_low,
       interactivity_ci_high, ttft_p50_s, tpot_p50_s, on_overall_front, false AS published
FROM serving_frontier
WHERE ($model IS NULL OR model_id = $model)
  AND ($hardware IS NULL OR hardware_name = $hardware)
UNION ALL
SELECT result_id, model_id, endpoint, input_shape, hardware_name, engine, measured_by, precision, options_id,
       load_kind, CAST(concurrency AS DOUBLE), output_throughput_per_gpu, interactivity, NULL, NULL,
       ttft_p50_s, tpot_p50_s, NULL, true
FROM serving_published_points
WHERE output_throughput_per_gpu IS NOT NULL AND interactivity IS NOT NULL
  AND ($model IS NULL OR model_id = $model)
  AND ($hardware IS NULL OR hardware_name = $hardware)
ORDER BY model_id, endpoint, published, hardware_name, engine, interactivity
