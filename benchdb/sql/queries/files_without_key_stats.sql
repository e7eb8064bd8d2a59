-- Files of the batch with rows whose scenario key columns have no min/max statistics
-- (batch_key_stats.sql).
SELECT DISTINCT file_name
FROM batch_key_stats
WHERE num_values > 0
  AND stats_min_value IS NULL
ORDER BY file_name
