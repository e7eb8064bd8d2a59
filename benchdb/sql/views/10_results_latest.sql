-- results_latest: the latest valid, successful timing result per series (scenario key with its
-- options, on one piece of hardware: results.series_id), from the most recent run
-- (runs.started_at) that measured it validly, with the run, the hardware and derived figures:
-- peak memory (device if measured, else host RSS), mean power, energy per item, FLOPs per forward
-- and achieved FLOP/s, and background_cpu_pct: the CPU use of other processes (percent of the
-- machine) just before the scenario, from settings (NULL when not recorded). Only results whose
-- primary metric is a timing (bdb_timing_metric, unit 's') count: a --verify-only check (primary
-- metric max_rel_err) is never a median latency here; it is in the verification view.
CREATE OR REPLACE VIEW results_latest AS
WITH extra AS (
    SELECT result_id,
           max(max) FILTER (WHERE metric = 'peak_device_allocated_bytes') AS peak_device_bytes,
           max(max) FILTER (WHERE metric = 'peak_rss_bytes')              AS peak_rss_bytes,
           max(max) FILTER (WHERE metric = 'peak_rss_increment_bytes')    AS peak_rss_increment_bytes,
           max(median) FILTER (WHERE metric = 'power_w')                  AS power_w,
           max(median) FILTER (WHERE metric = 'flops')                    AS flops_per_forward
    FROM result_metrics
    GROUP BY result_id
)
SELECT r.*,
       ru.started_at                                             AS run_started_at,
       ru.git_commit,
       ru.host,
       h.device_name                                             AS hardware_name,
       h.kind                                                    AS hardware_kind,
       coalesce(x.peak_device_bytes, x.peak_rss_bytes)           AS peak_memory_bytes,
       x.peak_rss_increment_bytes,
       x.power_w,
       x.power_w * r.median / r.batch_size                       AS energy_per_item_j,
       x.flops_per_forward,
       x.flops_per_forward / r.median                            AS achieved_flops,
       TRY_CAST(json_extract_string(r.settings, '$.background_cpu_pct') AS DOUBLE) AS background_cpu_pct
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
LEFT JOIN extra x USING (result_id)
WHERE r.status = 'ok' AND r.validity = 'valid'
  AND bdb_timing_metric(r.metric) AND r.unit = 's'
QUALIFY row_number() OVER (
    PARTITION BY r.series_id
    ORDER BY ru.started_at DESC, r.result_id DESC
) = 1;
