-- Prefix of samples.sql: the rows of contract v1 files, which have no repeat column (one process:
-- repeat 0). $files: their paths.
WITH file_rows AS (
    SELECT *, 0 AS repeat FROM read_parquet($files, filename = true)
)
