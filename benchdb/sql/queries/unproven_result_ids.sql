-- Files of the batch (batch_files) with rows whose Parquet statistics (batch_key_stats) do not
-- prove that every row carries the file's own scenario id: no statistics, a null, or another id
-- in a row group. Their rows cannot be grouped by result id (batch_rows_parts.sql).
SELECT DISTINCT f.filename
FROM batch_files f
LEFT JOIN batch_key_stats m ON m.file_name = f.filename AND m.path_in_schema = 'scenario_id'
WHERE f.num_rows > 0
  AND (m.file_name IS NULL
       OR (m.num_values > 0
           AND (m.stats_min_value IS DISTINCT FROM f.scenario_id
                OR m.stats_max_value IS DISTINCT FROM f.scenario_id
                OR m.stats_null_count IS DISTINCT FROM 0)))
ORDER BY f.filename
