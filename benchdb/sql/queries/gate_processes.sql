-- Every process's samples of one metric, for the valid results of the given series among the
-- given results (a side of the gate): one row per (series, result, repeat). A side that holds
-- several runs of a series (separate invocations, --ab trials) pools them: each is a process.
SELECT r.series_id, s.result_id, s.repeat, list(s.value ORDER BY s.iteration) AS vals
FROM samples s
JOIN results r ON r.result_id = s.result_id
WHERE list_contains($results, r.result_id) AND list_contains($series, r.series_id)
  AND s.metric = $metric AND r.status = 'ok' AND r.validity = 'valid'
GROUP BY r.series_id, s.result_id, s.repeat
ORDER BY r.series_id, s.result_id, s.repeat
