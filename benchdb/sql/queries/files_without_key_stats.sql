-- Files of the batch with rows whose scenario key columns have no min/max statistics.
SELECT DISTINCT file_name
FROM parquet_metadata($files)
WHERE path_in_schema IN ('run_id', 'scenario_id', 'model_id', 'backend', 'device', 'mode',
                         'precision', 'batch_size', 'input_shape')
  AND num_values > 0
  AND stats_min_value IS NULL
ORDER BY file_name
