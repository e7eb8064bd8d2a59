-- Prefix of samples.sql: the rows of contract v1 files, which have no repeat column (one process:
-- repeat 0, whatever column of that name such a file may carry). $files: their paths.
WITH file_rows AS (
    SELECT run_id, scenario_id, model_id, backend, device, mode, precision, batch_size, input_shape,
           metric, unit, iteration, t_offset_s, value, 0 AS repeat, filename
    FROM read_parquet($files, filename = true)
)
