-- Prefix of samples.sql: the rows of contract v2 files. $files: their paths.
WITH file_rows AS (
    SELECT * FROM read_parquet($files, filename = true)
)
