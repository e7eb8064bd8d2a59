-- Dashboard: the serving frontier, under the model and hardware filters: every measured load point of
-- each configuration (serving_points: its curve, in order of load) with whether it is on the
-- configuration's Pareto front of output-token throughput per accelerator against interactivity
-- (tokens/s per user; serving_frontier: on_front, on_overall_front) and the interactivity's 95 % CI,
-- a `--curve` point's region, and which window its figures are over; beside them the load points a
-- source only published (serving_published_points: summary figures, no interval; published = true).
SELECT p.result_id, p.model_id, p.endpoint, p.input_shape, p.hardware_name, p.engine, p.measured_by, p.precision,
       p.options_id, p.load_kind, p.load_value, p.output_throughput_per_device, p.interactivity,
       p.interactivity_ci_low, p.interactivity_ci_high, p.ttft_p50_s, p.tpot_p50_s,
       f.result_id IS NOT NULL AS on_front, coalesce(f.on_overall_front, false) AS on_overall_front,
       p.curve_region, p.figures_window, false AS published
FROM serving_points p
LEFT JOIN serving_frontier f ON f.result_id = p.result_id
WHERE p.output_throughput_per_device IS NOT NULL AND p.interactivity IS NOT NULL
  AND ($model IS NULL OR p.model_id = $model)
  AND ($hardware IS NULL OR p.hardware_name = $hardware)
UNION ALL
SELECT result_id, model_id, endpoint, input_shape, hardware_name, engine, measured_by, precision, options_id,
       load_kind, CAST(concurrency AS DOUBLE), output_throughput_per_gpu, interactivity, NULL, NULL,
       ttft_p50_s, tpot_p50_s, NULL, NULL, NULL, NULL, true
FROM serving_published_points
WHERE output_throughput_per_gpu IS NOT NULL AND interactivity IS NOT NULL
  AND ($model IS NULL OR model_id = $model)
  AND ($hardware IS NULL OR hardware_name = $hardware)
ORDER BY model_id, endpoint, published, hardware_name, engine, interactivity
