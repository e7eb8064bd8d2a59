-- The valid results of the given series among the given results (a side of the gate): whose
-- processes the gate pools, per series.
SELECT result_id, series_id
FROM results
WHERE result_id IN (SELECT unnest($results)) AND series_id IN (SELECT unnest($series))
  AND status = 'ok' AND validity = 'valid'
