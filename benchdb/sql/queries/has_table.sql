-- Whether the open warehouse has a base table of this name in its main schema.
SELECT count(*) > 0
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $1
