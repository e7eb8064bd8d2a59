-- Dashboard: change points (open first, newest first) under the model and hardware filters; an open
-- one carries the command that acknowledges it (the dashboard itself writes nothing).
SELECT c.change_id, c.status, c.series_id, c.model_id, c.backend, c.device, c.mode, c.precision,
       c.batch_size, c.input_shape, h.device_name AS hardware_name, c.run_id, c.run_started_at,
       c.git_commit, c.before_median, c.after_median, c.change, c.p_value, c.note,
       CASE WHEN c.status <> 'acked' THEN 'benchdb ack ' || c.change_id || ' --note "why"' END AS acknowledge_with
FROM change_points c
JOIN hardware h USING (hardware_id)
WHERE ($model IS NULL OR c.model_id = $model)
  AND ($hardware IS NULL OR h.device_name = $hardware)
ORDER BY c.status = 'acked', c.run_started_at DESC, c.change_id
