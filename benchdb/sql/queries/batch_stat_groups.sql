-- Prefix that defines stat_groups (metric_stats.sql) for ingest: the batch's files still in
-- batch_files (the rejected ones are deleted from it first), from batch_groups.sql, keyed by the
-- scenario id of each file's metadata; only rows that carry their file's key.
WITH stat_groups AS (
    SELECT f.scenario_id, b.metric, b.unit, b.g
    FROM batch_groups b
    JOIN batch_files f USING (filename)
    WHERE b.foreign_columns IS NULL
)
