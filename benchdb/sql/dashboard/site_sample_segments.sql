-- The static site's raw samples (benchdb/web/packed.py): one row per result, metric, repeat and unit,
-- in the order of samples.sql (the headline metric first), with how many samples it holds;
-- site_sample_columns.sql gives those samples' rows in the same order.
SELECT s.result_id, s.metric, s.unit, s.repeat, count(*) AS n
FROM samples s
JOIN results r USING (result_id)
GROUP BY s.result_id, s.metric, s.unit, s.repeat, r.metric
ORDER BY s.result_id, s.metric = r.metric DESC, s.metric, s.repeat, s.unit
