-- Prefix of batch_groups.sql: a batch's rows read back from the parts ingest just wrote of them
-- (a few large files scan much faster than the batch's many small ones), grouped by result id:
-- the same groups as by file, once the key statistics prove that each file's rows all carry
-- its own scenario id (unproven_result_ids.sql finds none that does not). $parts: those parts.
CREATE OR REPLACE TEMP TABLE batch_groups AS
WITH group_rows AS (
    SELECT result_id AS group_key, metric, unit, value, iteration, t_offset_s
    FROM read_parquet($parts)
),
group_files AS (
    SELECT scenario_id AS group_key, filename FROM batch_files
)
