-- Dashboard: the history of one series (trends), oldest first, with the median's 95 % CI per run
-- and the change against the previous run; change points of the series are marked (change_id).
-- Bound to NULL (the static site's export) it gives every series, grouped by series.
SELECT t.series_id, t.model_id, t.backend, t.device, t.mode, t.precision, t.batch_size, t.input_shape,
       t.hardware_name, t.run_id, t.run_started_at, t.git_commit, t.median, t.median_ci_low,
       t.median_ci_high, t.n, t.change_vs_previous, t.result_id,
       c.change_id, c.status AS change_status, c.change AS change_point_change, c.note AS change_note
FROM trends t
LEFT JOIN change_points c ON c.series_id = t.series_id AND c.run_id = t.run_id
WHERE ($series IS NULL OR t.series_id = $series)
ORDER BY t.series_id, t.run_started_at, t.result_id
