-- Prefix that defines stage_samples over a batch of contract files for metric_stats.sql.
WITH stage_samples AS (
    SELECT scenario_id, metric, unit, value FROM read_parquet($files)
)
