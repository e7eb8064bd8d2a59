-- What an imported result's source meant by its figures, one row per (result, benchdb metric).
INSERT INTO source_definitions BY NAME
SELECT scenario_id AS result_id, d.metric, d.source_metric, d.source_definition, d.benchdb_definition,
       d.same_definition, coalesce(d.recomputed, false) AS recomputed, d.why
FROM (
    SELECT scenario_id,
           unnest(from_json(json_extract(source, '$.definitions'),
                            '[{"metric": "VARCHAR", "source_metric": "VARCHAR", "source_definition": "VARCHAR",
                               "benchdb_definition": "VARCHAR", "same_definition": "BOOLEAN",
                               "recomputed": "BOOLEAN", "why": "VARCHAR"}]')) AS d
    FROM batch_files
    WHERE source IS NOT NULL AND json_extract(source, '$.definitions') IS NOT NULL
)
