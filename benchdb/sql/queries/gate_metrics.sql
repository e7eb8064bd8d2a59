-- The metrics measured for the given results: those with per-metric statistics, plus $metric when
-- raw samples of it exist (EXISTS stops at the first sample instead of scanning them all).
SELECT metric FROM result_metrics WHERE result_id IN (SELECT unnest($ids))
UNION
SELECT $metric WHERE EXISTS (SELECT 1 FROM samples WHERE metric = $metric AND result_id IN (SELECT unnest($ids)))
ORDER BY metric
