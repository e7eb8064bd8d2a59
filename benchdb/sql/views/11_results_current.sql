-- results_current: the latest timing attempt per series (results.series_id), whatever its status
-- (ok, failed, oom, timeout, unsupported, skipped, mismatch) or validity: what happens today when
-- the scenario is measured. Results whose primary metric is not a timing (--verify-only checks,
-- primary metric max_rel_err) are left out: they are in the verification view. background_cpu_pct:
-- the CPU use of other processes (percent of the machine) just before the scenario, from settings
-- (NULL when not recorded).
CREATE OR REPLACE VIEW results_current AS
SELECT r.*,
       ru.started_at  AS run_started_at,
       ru.host,
       h.device_name  AS hardware_name,
       h.kind         AS hardware_kind,
       TRY_CAST(json_extract_string(r.settings, '$.background_cpu_pct') AS DOUBLE) AS background_cpu_pct
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
WHERE bdb_timing_metric(r.metric)
QUALIFY row_number() OVER (
    PARTITION BY r.series_id
    ORDER BY ru.started_at DESC, r.result_id DESC
) = 1;
