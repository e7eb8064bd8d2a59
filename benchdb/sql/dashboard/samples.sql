-- Dashboard: the raw samples of one result (every metric), in measurement order, with the result's
-- scenario so the page can say what they are.
SELECT s.metric, s.unit, s.repeat, s.iteration, s.t_offset_s, s.value,
       r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size, r.input_shape, r.series_id
FROM samples s
JOIN results r USING (result_id)
WHERE s.result_id = $result
ORDER BY s.metric, s.repeat, s.iteration, s.t_offset_s
