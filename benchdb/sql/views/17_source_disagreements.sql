-- source_disagreements: what an imported result's source files say against each other, one row per
-- disagreement, never resolved here: the import keeps the logs' figure and records each line.
--   A run against its published table's row (accelerator, count, nodes, model, scenario, units,
--   result, power: "table 'X', logs 'Y'"), and a table's row against itself (its platform name
--   against its own accelerator and host-processor counts, its accelerator counts against each
--   other, an accuracy string in another form than the benchmark's other rows): see
--   benchdb/interop/mlperf_published.py. The text names the table and the row's Location.
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
