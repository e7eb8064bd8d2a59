-- The Parquet column statistics of the scenario key columns of a batch's files, read once per batch
-- (parquet_metadata lists every column chunk of every row group: the costliest footer read), or once
-- for all of an ingest's files (ingest.load.Loader.read_key_stats), for
-- check_samples.sql and files_without_key_stats.sql. $files: the batch's paths.
CREATE OR REPLACE TEMP TABLE batch_key_stats AS
SELECT file_name, path_in_schema, num_values, stats_min_value, stats_max_value, stats_null_count
FROM parquet_metadata($files)
WHERE path_in_schema IN ('run_id', 'scenario_id', 'model_id', 'backend', 'device', 'mode',
                         'precision', 'batch_size', 'input_shape')
