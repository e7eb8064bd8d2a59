-- Prefix of batch_groups.sql: a batch's rows read back from the parts ingest just wrote of them
-- (a few large parts scan much faster than the batch's many small files), grouped by the result
-- id samples.sql gave each row: its file's, or its file's marked with the key columns that
-- differ. $parts: those parts.
CREATE OR REPLACE TEMP TABLE batch_groups AS
WITH group_rows AS (
    SELECT result_id AS group_key, metric, unit, value, iteration, t_offset_s
    FROM read_parquet($parts)
),
group_files AS (
    SELECT scenario_id AS group_key, filename FROM batch_files
)
