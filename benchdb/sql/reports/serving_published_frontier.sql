-- Report: the published (summary-only) serving points on each system's Pareto front of total token
-- throughput per GPU against interactivity (serving_published_frontier) under the filters, per
-- workload and system in order of interactivity.
SELECT *
FROM serving_published_frontier
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, endpoint, in_tokens, out_tokens, hardware_name, engine, precision, speculative_decoding,
         interactivity, result_id
