-- results_current: the latest result per series (results.series_id), whatever its status
-- (ok, failed, oom, timeout, unsupported, skipped, mismatch): what happens today.
CREATE OR REPLACE VIEW results_current AS
SELECT r.*,
       ru.started_at  AS run_started_at,
       ru.host,
       h.device_name  AS hardware_name,
       h.kind         AS hardware_kind
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
QUALIFY row_number() OVER (
    PARTITION BY r.series_id
    ORDER BY ru.started_at DESC, r.result_id DESC
) = 1;
