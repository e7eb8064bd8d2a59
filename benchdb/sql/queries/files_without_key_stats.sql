-- Files of the batch (batch_files) with rows whose scenario key columns have no min/max
-- statistics (batch_key_stats.sql, which may hold other batches' files too).
SELECT DISTINCT file_name
FROM batch_key_stats
WHERE num_values > 0
  AND stats_min_value IS NULL
  AND file_name IN (SELECT filename FROM batch_files)
ORDER BY file_name
