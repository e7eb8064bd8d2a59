-- trends: every valid timing result of a scenario over time (runs) and commits, oldest first,
-- with the change of the median against the previous run of the same series. Only results whose
-- primary metric is a timing (bdb_timing_metric, unit 's') are points: a --verify-only check
-- between two runs is neither a point nor the "previous" of the next one.
-- series_id identifies a scenario (with its options) on one piece of hardware across runs.
CREATE OR REPLACE VIEW trends AS
SELECT r.series_id,
       r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size, r.input_shape,
       r.options, r.options_id, r.hardware_id, h.device_name AS hardware_name,
       r.run_id, ru.started_at AS run_started_at, ru.git_commit, ru.host,
       r.median, r.median_ci_low, r.median_ci_high, r.throughput, r.n,
       r.median / lag(r.median) OVER w - 1 AS change_vs_previous,
       r.result_id
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
WHERE r.status = 'ok' AND r.validity = 'valid'
  AND bdb_timing_metric(r.metric) AND r.unit = 's'
WINDOW w AS (PARTITION BY r.series_id
             ORDER BY ru.started_at, r.result_id);
