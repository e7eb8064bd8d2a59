-- Provenance of the imported results in the batch being loaded (batch_files.source: the contract's
-- metadata.scenario.source as JSON, NULL for benchdb's own runs).
INSERT INTO result_sources BY NAME
SELECT scenario_id                                                     AS result_id,
       json_extract_string(source, '$.format')                         AS format,
       json_extract_string(source, '$.file')                           AS source_file,
       json_extract_string(source, '$.tool')                           AS tool,
       json_extract_string(source, '$.tool_version')                   AS tool_version,
       coalesce(TRY_CAST(json_extract(source, '$.summary_only') AS BOOLEAN), false) AS summary_only,
       json_extract_string(source, '$.percentile_method')              AS percentile_method
FROM batch_files
WHERE source IS NOT NULL
