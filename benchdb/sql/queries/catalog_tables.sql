-- The base tables of the warehouse's main schema.
SELECT table_name
FROM duckdb_tables()
WHERE NOT internal AND database_name = current_database() AND schema_name = 'main' AND NOT temporary
