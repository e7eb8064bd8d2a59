INSERT INTO samples (result_id, file_id, metric, unit, iteration, t_offset_s, value)
SELECT s.scenario_id, f.file_id, s.metric, s.unit, s.iteration, s.t_offset_s, s.value
FROM stage_samples s
JOIN batch_files f ON f.filename = s.filename
