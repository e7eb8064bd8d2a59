-- Row rules of the contract over a batch of files, from the counts batch_groups.sql took in its one
-- pass over the rows (nothing is copied). Returns one row per file that breaks a rule: (filename,
-- reason naming the field). The scenario key columns are checked row by row (samples.sql marks a
-- row whose key differs from its file's), never from the file's Parquet statistics.
WITH per_metric AS (
    SELECT filename, foreign_columns, metric, g.n AS n, bad_value, negative, bad_iteration, bad_offset
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
           sum(n) FILTER (WHERE metric IS NULL OR metric = '')   AS bad_metric,
           sum(n)                                                AS rows_read,
           sum(n) FILTER (WHERE foreign_columns IS NOT NULL)     AS foreign_rows,
           array_to_string(list_sort(list_distinct(flatten(
               list(string_split(foreign_columns, ',')) FILTER (WHERE foreign_columns IS NOT NULL)))), ', ')
                                                                 AS foreign_columns
    FROM per_metric
    GROUP BY filename
),
reasons AS (
    SELECT f.filename,
           CASE
               WHEN p.foreign_rows > 0 THEN
                   'scenario key columns: ' || p.foreign_columns || ' differ from metadata.scenario in '
                   || p.foreign_rows || ' row(s)'
               WHEN coalesce(p.rows_read, 0) <> f.num_rows THEN
                   'file: ' || coalesce(p.rows_read, 0) || ' of its ' || f.num_rows || ' row(s) could be read'
               WHEN p.bad_value > 0 THEN
                   'value: ' || p.bad_value || ' non-finite or missing value(s) in metric ' || p.bad_value_metric
               WHEN p.negative > 0 THEN
                   'value: ' || p.negative || ' negative value(s) in metric ' || p.negative_metric
               WHEN p.bad_metric > 0 THEN 'metric: ' || p.bad_metric || ' row(s) without a metric name'
               WHEN p.bad_iteration > 0 THEN
                   'iteration: ' || p.bad_iteration || ' missing, negative or above 2147483647 value(s)'
               WHEN p.bad_offset > 0 THEN
                   't_offset_s: ' || p.bad_offset || ' missing, non-finite or negative value(s)'
               WHEN f.status = 'ok' AND NOT f.summary_only AND NOT EXISTS (
                        SELECT 1 FROM per_metric pm
                        WHERE pm.filename = f.filename AND pm.metric = f.primary_metric
                          AND pm.foreign_columns IS NULL) THEN
                   'metadata.scenario.status: ok, but the file has no ' || f.primary_metric || ' samples'
           END AS reason
    FROM batch_files f
    LEFT JOIN per_file p ON p.filename = f.filename
)
SELECT filename, reason FROM reasons WHERE reason IS NOT NULL ORDER BY filename
