-- Dashboard: what needs a look: the latest attempt of every series that failed or is not valid
-- (results_current), with its error or validity reasons, newest first, under the filters.
SELECT c.result_id, c.series_id, c.model_id, c.backend, c.device, c.mode, c.precision, c.batch_size, c.input_shape,
       h.device_name AS hardware_name, c.status, c.validity, c.error,
       array_to_string(c.validity_reasons, '; ') AS validity_reasons, ru.started_at AS run_started_at
FROM results_current c
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
WHERE (c.status <> 'ok' OR c.validity <> 'valid')
  AND ($model IS NULL OR c.model_id = $model)
  AND ($hardware IS NULL OR h.device_name = $hardware)
ORDER BY ru.started_at DESC, c.model_id, c.result_id
