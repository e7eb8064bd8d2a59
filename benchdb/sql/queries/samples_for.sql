-- Raw samples of one metric for the given results.
SELECT result_id, any_value(unit) AS unit, list(value) AS vals
FROM samples
WHERE list_contains($ids, result_id) AND metric = $metric
GROUP BY result_id
