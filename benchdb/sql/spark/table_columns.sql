-- The warehouse's tables and their columns in order (to spell out `alias.*` where Spark's USING
-- joins would put the join keys first).
SELECT c.table_name, c.column_name, c.data_type
FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
WHERE t.table_type = 'BASE TABLE' AND c.table_schema = 'main'
ORDER BY c.table_name, c.ordinal_position
