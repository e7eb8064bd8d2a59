-- The macros of the warehouse's main schema: every overload's parameters and definition, in order.
SELECT function_name,
       string_agg(coalesce(array_to_string(parameters, ','), '') || ' => ' || coalesce(macro_definition, ''),
                  ' ;; ' ORDER BY coalesce(array_to_string(parameters, ','), ''), coalesce(macro_definition, ''))
FROM duckdb_functions()
WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'
  AND function_type IN ('macro', 'table_macro')
GROUP BY function_name
