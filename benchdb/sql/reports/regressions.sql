-- Report: open change points (shifts in a series' history that nobody acknowledged yet).
SELECT c.change_id, c.model_id, c.batch_size, c.input_shape, h.device_name AS hardware_name, c.backend,
       c.mode, c.precision, c.run_id, c.run_started_at, c.git_commit, c.before_median, c.after_median,
       c.change, c.p_value, c.points_before, c.points_after, c.series_id
FROM change_points c
JOIN hardware h USING (hardware_id)
WHERE c.status = 'open'
  AND ($models IS NULL OR list_contains($models, c.model_id))
  AND ($hardware IS NULL OR list_contains($hardware, h.device_name) OR list_contains($hardware, c.hardware_id))
ORDER BY abs(c.change) DESC, c.run_started_at
