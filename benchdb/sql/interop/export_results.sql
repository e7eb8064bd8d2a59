-- Results to export (benchdb export): every result with samples, with its run, hardware and model.
-- $models: model ids to keep (an empty list keeps all).
SELECT r.result_id, r.run_id, r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size,
       r.input_shape, r.metric AS primary_metric, r.status, r.validity, r.timing_method,
       CAST(r.options AS VARCHAR)        AS options,
       CAST(r.settings AS VARCHAR)       AS settings,
       strftime(r.started_at, '%Y-%m-%dT%H:%M:%S.%f+00:00') AS started_at,
       ru.host, ru.git_commit, ru.benchdb_version,
       CAST(ru.software AS VARCHAR)      AS software,
       CAST(h.fingerprint AS VARCHAR)    AS fingerprint,
       h.hardware_id,
       a.model_type, a.task
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
LEFT JOIN architectures a USING (arch_id)
WHERE r.n > 0
  AND (len($models) = 0 OR list_contains($models, r.model_id))
ORDER BY ru.started_at, r.result_id
