-- Per-result summaries for the Hub's dataset viewer: one row per scenario of the given files
-- ($file_ids), with its hardware and run; JSON columns as text; the local file id left out.
SELECT r.* EXCLUDE (file_id, options, settings, extra),
       h.device_name               AS hardware_name,
       h.kind                      AS hardware_kind,
       ru.started_at               AS run_started_at,
       ru.git_commit,
       ru.benchdb_version,
       ru.tags,
       CAST(r.options AS VARCHAR)  AS options,
       CAST(r.settings AS VARCHAR) AS settings,
       CAST(r.extra AS VARCHAR)    AS extra
FROM results r
JOIN hardware h USING (hardware_id)
JOIN runs ru USING (run_id)
WHERE list_contains($file_ids::BIGINT[], r.file_id)
ORDER BY ru.started_at, r.result_id;
