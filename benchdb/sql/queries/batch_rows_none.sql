-- Prefix of batch_groups.sql for a batch whose files hold no rows (nothing was written).
CREATE OR REPLACE TEMP TABLE batch_groups AS
WITH group_rows AS (
    SELECT CAST(NULL AS VARCHAR) AS group_key, CAST(NULL AS VARCHAR) AS metric, CAST(NULL AS VARCHAR) AS unit,
           CAST(NULL AS DOUBLE) AS value, CAST(NULL AS INTEGER) AS iteration, CAST(NULL AS DOUBLE) AS t_offset_s
    WHERE false
),
group_files AS (
    SELECT scenario_id AS group_key, filename FROM batch_files
)
