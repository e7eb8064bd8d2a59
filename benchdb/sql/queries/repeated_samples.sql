-- Samples of the primary metric of every result of the given runs measured in 2+ processes,
-- one list per process: (result_id, [[values of repeat 0], [values of repeat 1], ...]).
SELECT result_id, list(vals ORDER BY repeat) AS per_repeat
FROM (
    SELECT s.result_id, s.repeat, list(s.value ORDER BY s.iteration) AS vals
    FROM samples s
    JOIN results r ON r.result_id = s.result_id AND s.metric = r.metric
    WHERE list_contains($runs, r.run_id) AND r.repeats >= 2
    GROUP BY s.result_id, s.repeat
)
GROUP BY result_id
