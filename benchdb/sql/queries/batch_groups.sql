-- One pass over a batch's rows (ingest): per file and metric, the aggregates every statistic is
-- derived from (bdb_group_values) and the counts of rows that break the contract's row rules
-- (check_samples.sql turns them into reasons). Grouped by file, not by the scenario id the rows
-- claim: a file whose rows claim another file's scenario is rejected, and never mixes into it.
-- Follows a prefix that defines group_rows(group_key, metric, unit, value, iteration, t_offset_s)
-- and group_files(group_key, filename): batch_rows_parts.sql (the batch's new parts, keyed by
-- the result id its files' statistics prove) or batch_rows_files.sql (the files themselves).
-- $units: units whose values can never be negative.
SELECT k.filename, r.* EXCLUDE (group_key)
FROM (
    SELECT group_key,
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
JOIN group_files k USING (group_key)
