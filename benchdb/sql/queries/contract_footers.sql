-- The footers of a batch of Parquet files in one pass (ingest's bulk contract check), one row per
-- file: row count, a hash of its Parquet column descriptions (sorted), the Arrow schema pyarrow
-- stored (the two decide the Arrow schema pyarrow reads), the benchdb contract document, and whether
-- a key occurs more than once (such a file is read on its own, as pyarrow reads it).
-- $files: the paths; $contract_key / $arrow_key: the two key-value metadata keys (BLOB).
WITH kv AS (
    SELECT file_name,
           any_value(value) FILTER (WHERE key = $contract_key)  AS contract,
           count(*) FILTER (WHERE key = $contract_key)          AS contract_keys,
           any_value(value) FILTER (WHERE key = $arrow_key)      AS arrow_schema,
           count(*) FILTER (WHERE key = $arrow_key)             AS arrow_keys
    FROM parquet_kv_metadata($files)
    WHERE key = $contract_key OR key = $arrow_key
    GROUP BY file_name
),
columns AS (
    SELECT file_name,
           md5(CAST(list(struct_pack(name, type, type_length, repetition_type, num_children,
                                     converted_type, scale, precision, field_id, logical_type)
                         ORDER BY name, type, type_length, repetition_type, num_children,
                                  converted_type, scale, precision, field_id, logical_type) AS VARCHAR)) AS columns
    FROM parquet_schema($files)
    GROUP BY file_name
)
SELECT f.file_name,
       f.num_rows,
       c.columns,
       kv.arrow_schema,
       kv.contract,
       coalesce(kv.contract_keys > 1 OR kv.arrow_keys > 1, false)  AS repeated_key
FROM parquet_file_metadata($files) f
JOIN columns c USING (file_name)
LEFT JOIN kv USING (file_name)
