-- Row rules of the contract over a batch of files, from the counts batch_groups.sql took in its one
-- pass over the rows (nothing is copied). Returns one row per file that breaks a rule: (filename, reason naming the field).
-- Scenario key columns are checked from the Parquet column statistics (min = max = the
-- metadata's value in every row group; table batch_key_stats, batch_key_stats.sql); files whose writer left no statistics are listed
-- by check_keys_rows.sql instead.
WITH per_metric AS (
    SELECT filename, metric, g.n AS n, bad_value, negative, bad_iteration, bad_offset
    FROM batch_groups
),
per_file AS (
    SELECT filename,
           sum(bad_value)                                        AS bad_value,
           min(metric) FILTER (WHERE bad_value > 0)              AS bad_value_metric,
           sum(negative)                                         AS negative,
           min(metric) FILTER (WHERE negative > 0)               AS negative_metric,
           sum(bad_iteration)                                    AS bad_iteration,
           sum(bad_offset)                                       AS bad_offset,
           sum(n) FILTER (WHERE metric IS NULL OR metric = '')   AS bad_metric
    FROM per_metric
    GROUP BY filename
),
expected AS (
    UNPIVOT (
        SELECT filename, run_id, scenario_id, model_id, backend, file_device AS device, mode,
               file_precision AS precision, CAST(batch_size AS VARCHAR) AS batch_size,
               file_input_shape AS input_shape
        FROM batch_files
    ) ON run_id, scenario_id, model_id, backend, device, mode, precision, batch_size, input_shape
    INTO NAME col VALUE want
),
keys AS (
    SELECT m.file_name AS filename,
           count(*) FILTER (WHERE m.stats_min_value IS NOT NULL
                              AND (m.stats_min_value IS DISTINCT FROM e.want
                                   OR m.stats_max_value IS DISTINCT FROM e.want
                                   OR m.stats_null_count > 0))   AS mismatched,
           string_agg(DISTINCT m.path_in_schema, ', ' ORDER BY m.path_in_schema)
               FILTER (WHERE m.stats_min_value IS NOT NULL
                         AND (m.stats_min_value IS DISTINCT FROM e.want
                              OR m.stats_max_value IS DISTINCT FROM e.want
                              OR m.stats_null_count > 0))        AS columns
    FROM batch_key_stats m
    JOIN expected e ON e.filename = m.file_name AND e.col = m.path_in_schema
    GROUP BY m.file_name
),
reasons AS (
    SELECT f.filename,
           CASE
               WHEN p.bad_value > 0 THEN
                   'value: ' || p.bad_value || ' non-finite or missing value(s) in metric ' || p.bad_value_metric
               WHEN p.negative > 0 THEN
                   'value: ' || p.negative || ' negative value(s) in metric ' || p.negative_metric
               WHEN p.bad_metric > 0 THEN 'metric: ' || p.bad_metric || ' row(s) without a metric name'
               WHEN p.bad_iteration > 0 THEN
                   'iteration: ' || p.bad_iteration || ' missing, negative or above 2147483647 value(s)'
               WHEN p.bad_offset > 0 THEN
                   't_offset_s: ' || p.bad_offset || ' missing, non-finite or negative value(s)'
               WHEN k.mismatched > 0 THEN
                   'scenario key columns: ' || k.columns || ' differ from metadata.scenario'
               WHEN f.status = 'ok' AND NOT f.summary_only AND NOT EXISTS (
                        SELECT 1 FROM per_metric pm
                        WHERE pm.filename = f.filename AND pm.metric = f.primary_metric) THEN
                   'metadata.scenario.status: ok, but the file has no ' || f.primary_metric || ' samples'
           END AS reason
    FROM batch_files f
    LEFT JOIN per_file p ON p.filename = f.filename
    LEFT JOIN keys k ON k.filename = f.filename
)
SELECT filename, reason FROM reasons WHERE reason IS NOT NULL ORDER BY filename
