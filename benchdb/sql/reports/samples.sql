-- Report: the raw samples of each result in $ids for its primary metric (or $metric when given),
-- one row per process (samples.repeat), in iteration order: what the HTML drill-down and the
-- comparison page draw and bootstrap.
SELECT s.result_id, s.repeat, any_value(s.unit) AS unit, list(s.value ORDER BY s.iteration) AS vals
FROM samples s
JOIN results r ON r.result_id = s.result_id
WHERE list_contains($ids, s.result_id) AND s.metric = coalesce($metric, r.metric)
GROUP BY s.result_id, s.repeat
ORDER BY s.result_id, s.repeat
