-- serving_source_figures: an imported serving load point's figures beside the source tool's own,
-- one row per benchdb metric the import recorded a definition for (source_definitions).
-- Tools define TTFT, TPOT and ITL their own way (GuideLLM's TPOT includes the first token;
-- AIPerf's counts tokens with the client's tokenizer; vLLM and SGLang's ITL is the gap between
-- chunks): benchdb_p50 is benchdb's figure, recomputed from the tool's per-request data in
-- benchdb's definition (NULL where the data cannot give it: recomputed false, why says so, or the
-- file was summary-only); source_p50 is the tool's own median of its closest figure
-- (source_metric, from source_statistics: its p50, else its median), converted to benchdb's
-- unit (seconds for times); same_definition says whether the two mean the same thing, so a
-- difference between them is either noise in the percentile methods (same) or the definitions.
-- Only the latest result of each series (as results_latest), summary-only ones included.
CREATE OR REPLACE VIEW serving_source_figures AS
WITH latest AS (
    SELECT r.result_id, r.series_id, r.model_id, r.mode, r.input_shape, r.batch_size, r.precision,
           coalesce(json_extract_string(r.options, '$.engine'), r.backend) AS engine,
           h.device_name AS hardware_name, ru.started_at AS run_started_at
    FROM results r
    JOIN runs ru USING (run_id)
    JOIN hardware h USING (hardware_id)
    WHERE r.status = 'ok' AND r.validity = 'valid' AND bdb_serving_point(r.mode)
    QUALIFY row_number() OVER (PARTITION BY r.series_id ORDER BY ru.started_at DESC, r.result_id DESC) = 1
),
d AS (
    SELECT l.*, s.format AS source_format, s.tool || coalesce(' ' || s.tool_version, '') AS measured_by,
           s.summary_only, sd.metric, sd.source_metric, sd.source_definition, sd.benchdb_definition,
           sd.same_definition, sd.recomputed, sd.why
    FROM latest l
    JOIN result_sources s USING (result_id)
    JOIN source_definitions sd USING (result_id)
),
src AS (
    SELECT result_id, metric AS source_metric,
           coalesce(max(value) FILTER (WHERE statistic = 'p50'), max(value) FILTER (WHERE statistic = 'median'))
                                                                        AS value,
           any_value(unit)                                              AS unit
    FROM source_statistics
    GROUP BY result_id, metric
)
SELECT d.result_id, d.series_id, d.run_started_at, d.model_id, d.hardware_name, d.engine, d.precision,
       d.mode AS endpoint, d.input_shape, d.batch_size, d.measured_by, d.source_format, d.summary_only,
       d.metric,
       CASE WHEN d.recomputed THEN m.median END                         AS benchdb_p50,
       CASE WHEN d.recomputed THEN m.n END                              AS benchdb_n,
       d.source_metric,
       src.value * CASE lower(src.unit) WHEN 'ms' THEN 1e-3 WHEN 'us' THEN 1e-6 WHEN 'ns' THEN 1e-9 ELSE 1 END
                                                                        AS source_p50,
       src.unit                                                         AS source_unit,
       d.same_definition, d.recomputed, d.source_definition, d.benchdb_definition, d.why
FROM d
LEFT JOIN result_metrics m ON m.result_id = d.result_id AND m.metric = d.metric
LEFT JOIN src ON src.result_id = d.result_id AND src.source_metric = d.source_metric;
