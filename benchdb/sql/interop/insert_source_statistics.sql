-- The statistics an imported result's source computed itself, one row per (metric, statistic).
INSERT INTO source_statistics BY NAME
SELECT scenario_id                                       AS result_id,
       s.metric, s.unit, s.statistic, s.value,
       json_extract_string(source, '$.percentile_method') AS percentile_method
FROM (
    SELECT scenario_id, source,
           unnest(from_json(json_extract(source, '$.statistics'),
                            '[{"metric": "VARCHAR", "unit": "VARCHAR", "statistic": "VARCHAR", "value": "DOUBLE"}]')) AS s
    FROM batch_files
    WHERE source IS NOT NULL
)
