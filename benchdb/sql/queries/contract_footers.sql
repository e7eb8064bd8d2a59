-- The footers of a batch of Parquet files in one pass (ingest's bulk contract check), one row per
-- file: row count, a hash of its Parquet column descriptions (sorted), the Arrow schema pyarrow
-- stored (the two decide the Arrow schema pyarrow reads), the benchdb contract document, and whether
-- a key occurs more than once (such a file is read on its own, as pyarrow reads it).
-- One table function reads each footer once for all four (a function per part read every footer
-- three times: most of the query's time).
-- $files: the paths; $contract_key / $arrow_key: the two key-value metadata keys (BLOB).
WITH m AS (
    SELECT parquet_file_metadata[1]                                                 AS f,
           parquet_schema                                                           AS s,
           list_filter(parquet_kv_metadata, lambda kv: kv.key = $contract_key)     AS contract,
           list_filter(parquet_kv_metadata, lambda kv: kv.key = $arrow_key)        AS arrow
    FROM parquet_full_metadata($files)
)
SELECT f.file_name,
       f.num_rows,
       md5(CAST(list_sort(list_transform(s, lambda c: struct_pack(
                    name := c.name, type := c.type, type_length := c.type_length,
                    repetition_type := c.repetition_type, num_children := c.num_children,
                    converted_type := c.converted_type, scale := c.scale, precision := c.precision,
                    field_id := c.field_id, logical_type := c.logical_type)), 'ASC', 'NULLS LAST')
                AS VARCHAR))                                                        AS columns,
       arrow[1].value                                                               AS arrow_schema,
       contract[1].value                                                            AS contract,
       coalesce(len(contract) > 1 OR len(arrow) > 1, false)                         AS repeated_key
FROM m
