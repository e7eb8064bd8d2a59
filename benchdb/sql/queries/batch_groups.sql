-- One pass over a batch's rows (ingest): per file and metric, the aggregates every statistic is
-- derived from (bdb_group_values) and the counts of rows that break the contract's row rules
-- (check_samples.sql turns them into reasons). Rows whose key columns differ from their file's
-- key form groups of their own (foreign_columns names those columns), counted for their file,
-- which is then rejected: they never mix into a result's statistics.
-- Follows a prefix that defines group_rows(group_key, metric, unit, value, iteration, t_offset_s)
-- and group_files(group_key, filename): batch_rows_parts.sql (the batch's new parts, keyed as
-- samples.sql keys them) or batch_rows_none.sql (a batch without rows).
-- $units: units whose values can never be negative.
SELECT k.filename, r.* EXCLUDE (group_key)
FROM (
    SELECT group_key,
           CASE WHEN starts_with(group_key, '!')
                THEN substr(group_key, 2, strpos(group_key, '|') - 2) END              AS foreign_columns,
           metric,
           any_value(unit)                                                              AS unit,
           bdb_group_values(value)                                                      AS g,
           count(*) FILTER (WHERE value IS NULL OR NOT isfinite(value))                 AS bad_value,
           count(*) FILTER (WHERE value < 0 AND list_contains($units, unit))            AS negative,
           count(*) FILTER (WHERE iteration IS NULL OR iteration NOT BETWEEN 0 AND 2147483647) AS bad_iteration,
           count(*) FILTER (WHERE t_offset_s IS NULL OR NOT isfinite(t_offset_s)
                                  OR t_offset_s < 0)                                    AS bad_offset
    FROM group_rows
    GROUP BY group_key, metric
) r
JOIN group_files k
  ON k.group_key = CASE WHEN r.foreign_columns IS NULL THEN r.group_key
                        ELSE substr(r.group_key, strpos(r.group_key, '|') + 1) END
