-- The views of the warehouse's main schema, as DuckDB stores them (catalog check, store/catalog.py).
SELECT view_name, sql
FROM duckdb_views()
WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'
