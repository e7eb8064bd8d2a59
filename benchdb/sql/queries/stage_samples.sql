-- Read a batch of contract files into one temporary table (filename says which file a row came from).
CREATE OR REPLACE TEMP TABLE stage_samples AS
SELECT * FROM read_parquet($files, filename = true)
