-- Record a change point; an already known one keeps its review status and note.
INSERT INTO change_points (change_id, series_id, model_id, backend, device, mode, precision, batch_size,
                           input_shape, options_id, hardware_id, run_id, run_started_at, git_commit, before_median,
                           after_median, change, p_value, points_before, points_after, detected_at, status)
VALUES ($change_id, $series_id, $model_id, $backend, $device, $mode, $precision, $batch_size, $input_shape,
        $options_id, $hardware_id, $run_id, $run_started_at, $git_commit, $before_median, $after_median, $change, $p_value,
        $points_before, $points_after, timezone('UTC', now()), 'open')
ON CONFLICT (change_id) DO UPDATE SET
    before_median = excluded.before_median, after_median = excluded.after_median, change = excluded.change,
    p_value = excluded.p_value, points_before = excluded.points_before, points_after = excluded.points_after
