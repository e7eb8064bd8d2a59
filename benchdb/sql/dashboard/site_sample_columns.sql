-- The static site's raw samples (benchdb/web/packed.py): every sample's numbers, in the order of
-- site_sample_segments.sql's rows and, within one, in measurement order (as samples.sql).
SELECT s.iteration, s.t_offset_s, s.value
FROM samples s
JOIN results r USING (result_id)
ORDER BY s.result_id, s.metric = r.metric DESC, s.metric, s.repeat, s.unit, s.iteration, s.t_offset_s
