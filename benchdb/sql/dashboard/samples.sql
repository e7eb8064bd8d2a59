-- Dashboard: the raw samples of one result (every metric), in measurement order, with the result's
-- scenario (what they are, and the command that measures them again).
SELECT s.metric, s.unit, s.repeat, s.iteration, s.t_offset_s, s.value,
       r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size, r.input_shape, r.series_id,
       r.threads, r.repeats
FROM samples s
JOIN results r USING (result_id)
WHERE s.result_id = $result
ORDER BY s.metric, s.repeat, s.iteration, s.t_offset_s
