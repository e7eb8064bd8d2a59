-- verification: the latest output check per series (results.series_id): every result whose outputs
-- were compared with PyTorch fp32 on the same inputs (it has a max_rel_err metric): --verify-only
-- checks (primary metric max_rel_err, timing_method 'none', verify_only = true) and timed runs of
-- the exported-graph backends, which check before they time (verify_only = false).
--   max_abs_err, max_rel_err: the largest error, absolute and relative to the reference output's
--       largest magnitude; tolerance: the limit for the precision (fp32 1e-3, fp16 2e-2, bf16 5e-2);
--   agrees: max_rel_err <= tolerance and the status is not 'mismatch' (a missing tolerance falls
--       back to status = 'ok'; NaN or infinite errors never agree).
-- These figures are ratios, never latencies: results_latest, trends and everything built on them
-- leave --verify-only checks out.
CREATE OR REPLACE VIEW verification AS
WITH err AS (
    SELECT result_id,
           max(max) FILTER (WHERE metric = 'max_abs_err') AS max_abs_err,
           max(max) FILTER (WHERE metric = 'max_rel_err') AS max_rel_err
    FROM result_metrics
    WHERE metric IN ('max_abs_err', 'max_rel_err')
    GROUP BY result_id
),
checked AS (
    SELECT r.*, ru.started_at AS run_started_at, ru.git_commit, ru.host,
           h.device_name AS hardware_name, h.kind AS hardware_kind,
           e.max_abs_err, e.max_rel_err,
           TRY_CAST(json_extract_string(r.extra, '$.tolerance') AS DOUBLE) AS tolerance,
           coalesce(json_extract_string(r.extra, '$.verify_only') = 'true', false)
               OR NOT bdb_timing_metric(r.metric) AS verify_only
    FROM results r
    JOIN err e USING (result_id)
    JOIN runs ru USING (run_id)
    JOIN hardware h USING (hardware_id)
    WHERE e.max_rel_err IS NOT NULL
)
SELECT series_id,
       model_id, backend, device, mode, precision, batch_size, input_shape, options, options_id,
       hardware_id, hardware_name, hardware_kind,
       run_id, run_started_at, git_commit, host,
       status, verify_only, max_abs_err, max_rel_err, tolerance,
       coalesce(max_rel_err <= tolerance AND NOT isnan(max_rel_err) AND NOT isinf(max_rel_err),
                status = 'ok') AND status <> 'mismatch' AS agrees,
       error,
       result_id
FROM checked
QUALIFY row_number() OVER (
    PARTITION BY series_id
    ORDER BY run_started_at DESC, result_id DESC
) = 1;
