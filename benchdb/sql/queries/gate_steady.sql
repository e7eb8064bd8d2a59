-- The steady-state test of every valid result of the given series among the given results ($results:
-- both sides of the gate), from its extra.steady_state (a serving load point's; tested is false where
-- none was run). Of a result that merged several processes (--repeats), it describes the first.
SELECT r.result_id, r.series_id,
       json_extract(r.extra, '$.steady_state') IS NOT NULL AS tested,
       coalesce(json_extract_string(r.extra, '$.steady_state.found') = 'true', false) AS found,
       json_extract_string(r.extra, '$.steady_state.reason') AS reason
FROM results r
WHERE r.result_id IN (SELECT unnest($results)) AND r.series_id IN (SELECT unnest($series))
  AND r.status = 'ok' AND r.validity = 'valid'
ORDER BY r.series_id, r.result_id
