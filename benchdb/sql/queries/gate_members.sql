-- The valid results of the given series among the given results (a side of the gate): whose
-- processes the gate pools, per series.
SELECT result_id, series_id
FROM results
WHERE list_contains($results, result_id) AND list_contains($series, series_id)
  AND status = 'ok' AND validity = 'valid'
