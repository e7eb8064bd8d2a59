-- Report: every serving load point (serving_points) under the filters, per workload and
-- configuration in order of load.
SELECT *
FROM serving_points
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, endpoint, in_tokens, out_tokens, hardware_name, engine, precision, options_id, load_kind,
         load_value, result_id
