-- The metrics with per-metric statistics among the given results ($ids).
SELECT DISTINCT metric FROM result_metrics WHERE result_id IN (SELECT unnest($ids)) ORDER BY metric
