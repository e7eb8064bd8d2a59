-- Prefix of batch_groups.sql: a batch's rows read from its files, grouped by file.
-- $files: the batch's paths.
CREATE OR REPLACE TEMP TABLE batch_groups AS
WITH group_rows AS (
    SELECT filename AS group_key, metric, unit, value, iteration, t_offset_s
    FROM read_parquet($files, filename = true)
),
group_files AS (
    SELECT filename AS group_key, filename FROM batch_files
)
