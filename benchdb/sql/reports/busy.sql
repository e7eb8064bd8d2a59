-- Results measured on a busy machine: the latest timing attempt of each series (results_current)
-- under the filters with a busy_machine validity reason (did not converge: invalid) or a
-- busy_machine warning in extra.warnings (converged: valid), busiest first.
SELECT model_id, hardware_name, backend, mode, precision, batch_size, input_shape, background_cpu_pct,
       status, validity, validity_reasons,
       CAST(json_extract(extra, '$.warnings') AS VARCHAR)                        AS warnings_json
FROM results_current c
WHERE ($models IS NULL OR list_contains($models, c.model_id))
  AND ($hardware IS NULL OR list_contains($hardware, c.hardware_name) OR list_contains($hardware, c.hardware_id))
  AND (array_to_string(coalesce(validity_reasons, []::VARCHAR[]), chr(10)) LIKE '%busy_machine:%'
       OR coalesce(CAST(json_extract(extra, '$.warnings') AS VARCHAR), '') LIKE '%busy_machine:%')
ORDER BY background_cpu_pct DESC NULLS LAST, model_id, hardware_name, backend, mode, precision,
         batch_size, input_shape
