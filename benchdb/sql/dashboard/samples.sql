-- Dashboard: the raw samples of one result (every metric), its headline (timing) metric first, each in
-- measurement order. Bound to NULL (the static site's export) it gives every result's samples, grouped
-- by result.
SELECT s.result_id, s.metric, s.unit, s.repeat, s.iteration, s.t_offset_s, s.value
FROM samples s
JOIN results r USING (result_id)
WHERE ($result IS NULL OR s.result_id = $result)
ORDER BY s.result_id, s.metric = r.metric DESC, s.metric, s.repeat, s.iteration, s.t_offset_s
