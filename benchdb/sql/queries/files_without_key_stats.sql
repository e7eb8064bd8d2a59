-- Files of the batch (batch_files) with rows whose scenario key columns have no min/max
-- statistics (batch_key_stats.sql, which may hold other batches' files too), or none at all (a
-- file the ingest-wide read left out): check_keys_rows.sql checks their rows instead.
SELECT DISTINCT f.filename
FROM batch_files f
LEFT JOIN batch_key_stats m ON m.file_name = f.filename
WHERE f.num_rows > 0
  AND (m.file_name IS NULL OR (m.num_values > 0 AND m.stats_min_value IS NULL))
ORDER BY f.filename
