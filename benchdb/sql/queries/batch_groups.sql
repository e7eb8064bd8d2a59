-- One pass over a batch's files (ingest): per file and metric, the aggregates every statistic is
-- derived from (bdb_group_values) and the counts of rows that break the contract's row rules
-- (check_samples.sql turns them into reasons). Grouped by file, not by the scenario id the rows
-- claim: a file whose rows claim another file's scenario is rejected, and never mixes into it.
-- $files: the batch's paths; $units: units whose values can never be negative.
CREATE OR REPLACE TEMP TABLE batch_groups AS
SELECT filename,
       metric,
       any_value(unit)                                                              AS unit,
       bdb_group_values(value)                                                      AS g,
       count(*) FILTER (WHERE value IS NULL OR NOT isfinite(value))                 AS bad_value,
       count(*) FILTER (WHERE value < 0 AND list_contains($units, unit))            AS negative,
       count(*) FILTER (WHERE iteration IS NULL OR iteration < 0)                   AS bad_iteration,
       count(*) FILTER (WHERE t_offset_s IS NULL OR NOT isfinite(t_offset_s)
                              OR t_offset_s < 0)                                    AS bad_offset
FROM read_parquet($files, filename = true)
GROUP BY filename, metric
