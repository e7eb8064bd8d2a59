-- Whether raw samples of $metric exist among the given results ($ids), for a metric without
-- per-metric statistics (EXISTS stops at the first sample instead of scanning them all).
SELECT EXISTS (SELECT 1 FROM samples WHERE metric = $metric AND result_id IN (SELECT unnest($ids)))
