-- One row per scenario file; statistics of its primary metric (NULL when it has no samples).
-- throughput: a measured throughput_items_s (items completed per second of wall time, e.g. with
-- several requests in flight: OpenVINO's throughput hint) when the file has one, else batch size
-- over the median time of one call.
INSERT INTO results BY NAME
SELECT f.scenario_id                      AS result_id,
       f.run_id, f.file_id, f.hardware_id, f.arch_id,
       f.model_id, f.backend, f.device, f.mode, f.precision, f.batch_size, f.input_shape,
       f.status, f.error, f.validity, f.validity_reasons, f.timing_method, f.driver,
       f.threads, f.load_avg_1m, f.stop_reason,
       bdb_utc(f.started_at)             AS started_at,
       f.primary_metric                   AS metric,
       st.unit,
       coalesce(st.n, 0)                  AS n,
       st.mean, st.median, st.min, st.max, st.stddev,
       st.p25, st.p75, st.p90, st.p95, st.p99, st.median_ci_low, st.median_ci_high,
       coalesce(tp.median,
                CASE WHEN st.unit = 's' AND st.median > 0 THEN f.batch_size / st.median END) AS throughput,
       CAST(f.settings AS JSON)           AS settings,
       CAST(f.extra AS JSON)              AS extra,
       CAST(f.options AS JSON)            AS options,
       f.options_id,
       f.series_id,
       f.repeats,
       'order_statistics'                 AS ci_method,
       f.accelerators,
       CAST(f.parallelism AS JSON)        AS parallelism
FROM batch_files f
LEFT JOIN stage_stats st ON st.scenario_id = f.scenario_id AND st.metric = f.primary_metric
LEFT JOIN stage_stats tp ON tp.scenario_id = f.scenario_id AND tp.metric = 'throughput_items_s'
                        AND tp.unit = 'items/s' AND st.unit = 's'
