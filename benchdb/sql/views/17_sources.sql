-- source_disagreements: what an imported result's source files say against each other, one row per
-- disagreement, never resolved here: the import keeps the logs' figure and records each line.
--   A run against its published table's row (accelerator, count, nodes, model, scenario, units,
--   result, power: "table 'X', logs 'Y'"), and a table's row against itself (its platform name
--   against its own accelerator and host-processor counts, its accelerator counts against each
--   other, an accuracy string in another form than the benchmark's other rows): see
--   benchdb/interop/mlperf/published.py. The text names the table and the row's Location.
--   round: the MLPerf round the run was judged by (settings.mlperf_round); NULL for other sources.
CREATE OR REPLACE VIEW source_disagreements AS
SELECT r.result_id, s.format AS source_format, r.model_id, r.mode,
       json_extract_string(r.options, '$.submitter') AS submitter,
       json_extract_string(r.options, '$.system') AS system,
       json_extract_string(r.settings, '$.mlperf_round') AS round,
       json_extract_string(r.settings, '$.location') AS location,
       d.disagreement
FROM results r
JOIN result_sources s USING (result_id),
unnest(CAST(json_extract(r.settings, '$.source_disagreements') AS VARCHAR[])) AS d(disagreement);

-- bdb_sources(models, hardware): where the warehouse's results come from, per source (benchdb's own
-- measurements, or the format a result was imported from) and MLPerf round (NULL elsewhere):
-- results, runs, systems (hardware rows), accelerator types, and for published results how many were
-- checked against the publisher's own table (settings.checked_against), reproduced it (no
-- disagreement between the run's logs and its row: settings.reproduces_table) and have any
-- disagreement at all, with the logs or within the table (source_disagreements lists them).
-- models, hardware: lists to keep (model ids; hardware names or ids), NULL for all.
CREATE OR REPLACE MACRO bdb_sources(models, hardware) AS TABLE
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
    WHERE (models IS NULL OR list_contains(models, r.model_id))
      AND (hardware IS NULL OR list_contains(hardware, h.device_name) OR list_contains(hardware, r.hardware_id))
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
ORDER BY source = 'benchdb' DESC, source, round NULLS FIRST;
