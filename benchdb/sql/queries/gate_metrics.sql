-- The metrics measured for the given results (from their per-metric statistics and raw samples).
SELECT metric FROM result_metrics WHERE list_contains($ids, result_id)
UNION
SELECT metric FROM samples WHERE list_contains($ids, result_id) AND metric = $metric
ORDER BY metric
