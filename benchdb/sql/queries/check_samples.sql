-- Row rules of the contract, checked over a whole staged batch at once.
-- Returns one row per file that breaks a rule: (filename, reason naming the field).
-- $1: units whose values can never be negative.
WITH per_file AS (
    SELECT s.filename,
           count(*) FILTER (WHERE s.value IS NULL OR NOT isfinite(s.value))            AS bad_value,
           min(s.metric) FILTER (WHERE s.value IS NULL OR NOT isfinite(s.value))       AS bad_value_metric,
           count(*) FILTER (WHERE s.value < 0 AND list_contains($1, s.unit))           AS negative,
           min(s.metric) FILTER (WHERE s.value < 0 AND list_contains($1, s.unit))      AS negative_metric,
           count(*) FILTER (WHERE s.iteration IS NULL OR s.iteration < 0)              AS bad_iteration,
           count(*) FILTER (WHERE s.t_offset_s IS NULL OR NOT isfinite(s.t_offset_s)
                                  OR s.t_offset_s < 0)                                 AS bad_offset,
           count(*) FILTER (WHERE s.metric IS NULL OR s.metric = '')                   AS bad_metric,
           count(*) FILTER (WHERE s.run_id IS DISTINCT FROM f.run_id
                               OR s.scenario_id IS DISTINCT FROM f.scenario_id
                               OR s.model_id IS DISTINCT FROM f.model_id
                               OR s.backend IS DISTINCT FROM f.backend
                               OR s.device IS DISTINCT FROM f.device
                               OR s.mode IS DISTINCT FROM f.mode
                               OR s.precision IS DISTINCT FROM f.precision
                               OR s.batch_size IS DISTINCT FROM f.batch_size
                               OR s.input_shape IS DISTINCT FROM f.input_shape)        AS key_mismatch,
           count(*) FILTER (WHERE s.metric = f.primary_metric)                         AS primary_rows
    FROM stage_samples s
    JOIN batch_files f ON f.filename = s.filename
    GROUP BY s.filename
),
row_rules AS (
    SELECT filename,
           CASE
               WHEN bad_value > 0 THEN
                   'value: ' || bad_value || ' non-finite or missing value(s) in metric ' || bad_value_metric
               WHEN negative > 0 THEN
                   'value: ' || negative || ' negative value(s) in metric ' || negative_metric
               WHEN bad_metric > 0 THEN 'metric: ' || bad_metric || ' row(s) without a metric name'
               WHEN bad_iteration > 0 THEN 'iteration: ' || bad_iteration || ' missing or negative value(s)'
               WHEN bad_offset > 0 THEN 't_offset_s: ' || bad_offset || ' missing, non-finite or negative value(s)'
               WHEN key_mismatch > 0 THEN
                   'scenario key columns: ' || key_mismatch || ' row(s) differ from metadata.scenario'
           END AS reason
    FROM per_file
)
SELECT filename, reason FROM row_rules WHERE reason IS NOT NULL
UNION ALL
SELECT f.filename,
       'metadata.scenario.status: ok, but the file has no ' || f.primary_metric || ' samples'
FROM batch_files f
LEFT JOIN per_file p ON p.filename = f.filename
WHERE f.status = 'ok' AND coalesce(p.primary_rows, 0) = 0
ORDER BY filename
