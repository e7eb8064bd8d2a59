-- Report: imported serving load points' figures beside their tools' own (serving_source_figures)
-- under the filters, per workload, configuration and tool. A published summary whose figures are
-- already in benchdb's names and definitions (InferenceX: source_metric = metric) has nothing to set
-- beside them: its points are in serving_published_frontier instead.
SELECT *
FROM serving_source_figures
WHERE NOT (summary_only AND source_metric IS NOT DISTINCT FROM metric)
  AND ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name))
ORDER BY model_id, endpoint, input_shape, hardware_name, engine, measured_by, result_id,
         CASE metric WHEN 'ttft_s' THEN 1 WHEN 'tpot_s' THEN 2 WHEN 'itl_token_s' THEN 3 WHEN 'itl_chunk_s' THEN 4
                     WHEN 'e2e_s' THEN 5 ELSE 6 END, metric
