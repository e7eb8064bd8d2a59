-- The warehouse's tables, and its samples (a view over the Parquet parts beside the file).
SELECT table_name
FROM information_schema.tables
WHERE table_schema = 'main' AND (table_type = 'BASE TABLE' OR table_name = 'samples')
ORDER BY table_name
