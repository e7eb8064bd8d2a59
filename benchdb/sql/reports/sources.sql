-- Report: where the warehouse's results come from, per source (benchdb's own measurements, or the
-- format a result was imported from) and MLPerf round (NULL elsewhere): results, runs, systems
-- (hardware rows), accelerator types, and for published results how many were checked against the
-- publisher's own table (settings.checked_against), reproduced it (no disagreement between the
-- run's logs and its row: settings.reproduces_table) and have any disagreement at all, with the
-- logs or within the table (the source_disagreements view lists them).
WITH r AS (
    SELECT r.result_id, r.run_id, r.hardware_id, r.model_id,
           coalesce(s.format, 'benchdb') AS source,
           json_extract_string(r.settings, '$.mlperf_round') AS round,
           h.device_name, h.kind,
           json_extract(r.settings, '$.checked_against') IS NOT NULL AS checked,
           coalesce(json_extract_string(r.settings, '$.reproduces_table') = 'true', false) AS reproduced,
           coalesce(json_array_length(json_extract(r.settings, '$.source_disagreements')), 0) AS disagreements
    FROM results r
    LEFT JOIN result_sources s USING (result_id)
    JOIN hardware h USING (hardware_id)
    WHERE ($models IS NULL OR list_contains($models, r.model_id))
      AND ($hardware IS NULL OR list_contains($hardware, h.device_name) OR list_contains($hardware, r.hardware_id))
)
SELECT source, round,
       count(*)                                            AS results,
       count(DISTINCT run_id)                              AS runs,
       count(DISTINCT hardware_id)                         AS systems,
       count(DISTINCT device_name) FILTER (WHERE kind NOT IN ('cpu', 'unknown')) AS accelerator_types,
       count(*) FILTER (WHERE checked)                     AS checked,
       count(*) FILTER (WHERE reproduced)                  AS reproduced,
       count(*) FILTER (WHERE disagreements > 0)           AS with_disagreements,
       sum(disagreements)                                  AS disagreements
FROM r
GROUP BY source, round
ORDER BY source = 'benchdb' DESC, source, round NULLS FIRST
