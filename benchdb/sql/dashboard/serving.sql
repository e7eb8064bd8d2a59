-- Dashboard: serving load points (serving_points) under the model and hardware filters, with the SLO
-- given in the URL (ttft_ms: TTFT p90, tpot_ms: TPOT p50; NULL: none) beside each row, so the page
-- draws TTFT and TPOT against load with the SLO as a line; figures_window: the requests the figures
-- are over (a steady-state window where the point found one).
SELECT result_id, series_id, model_id, hardware_name, engine, measured_by, precision, options_id, endpoint, input_shape,
       load_kind, load_value, n_requests, errors, ttft_p50_s, ttft_p90_s, tpot_p50_s, tpot_p50_ci_low_s,
       tpot_p50_ci_high_s, itl_p50_s, e2e_p50_s, request_throughput, output_throughput_per_device, interactivity,
       figures_window, curve_region,
       TRY_CAST($ttft_ms AS DOUBLE) / 1000 AS slo_ttft_s, TRY_CAST($tpot_ms AS DOUBLE) / 1000 AS slo_tpot_s
FROM serving_points
WHERE ($model IS NULL OR model_id = $model)
  AND ($hardware IS NULL OR hardware_name = $hardware)
ORDER BY model_id, endpoint, input_shape, hardware_name, engine, load_value
