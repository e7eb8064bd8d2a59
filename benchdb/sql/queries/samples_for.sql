-- Raw samples of one metric for the given results, in the order they were measured (the
-- warehouse does not keep rows in insertion order: ingest loads them in parallel).
SELECT result_id, any_value(unit) AS unit, list(value ORDER BY repeat, iteration) AS vals
FROM samples
WHERE list_contains($ids, result_id) AND metric = $metric
GROUP BY result_id
