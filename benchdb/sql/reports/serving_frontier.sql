-- Report: the load points on each serving configuration's Pareto front (serving_frontier) under
-- the filters, in order of interactivity.
SELECT *
FROM serving_frontier
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, endpoint, in_tokens, out_tokens, hardware_name, engine, precision, options_id, interactivity,
         result_id
