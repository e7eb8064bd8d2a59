-- Which of the names a query calls are table functions (benchdb.store.query_guard refuses those that are not known to only read).
SELECT DISTINCT lower(function_name)
FROM duckdb_functions()
WHERE function_type = 'table' AND lower(function_name) = ANY($names)
