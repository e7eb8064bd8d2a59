-- The latest result of every series among the given results, with what the gate shows of it.
SELECT r.result_id, r.run_id, r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size,
       r.input_shape, r.options, r.hardware_id, h.device_name AS hardware_name, h.kind AS hardware_kind,
       r.status, r.error, r.validity, r.validity_reasons, ru.started_at AS run_started_at,
       ru.git_commit, ru.host, r.series_id, ru.tags AS run_tags, r.metric AS primary_metric,
       coalesce(r.n, 0) AS primary_n
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
WHERE r.result_id IN (SELECT unnest($results))
QUALIFY row_number() OVER (
    PARTITION BY r.series_id
    ORDER BY ru.started_at DESC, r.result_id DESC) = 1
