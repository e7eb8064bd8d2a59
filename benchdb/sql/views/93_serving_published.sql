-- Published serving points: load points a source published as summaries (an import with
-- summary_only, e.g. InferenceX's API rows, benchdb/interop/inferencex.py). benchdb keeps none of
-- their requests, so nothing here is recomputed and nothing has an interval: every figure is the
-- source's own (source_statistics, in benchdb's metric names and units) and is never pooled with the
-- figures benchdb computes from requests (serving_points).
--
-- serving_published_points: the latest valid result of each such series, its system (hardware_name:
-- the system's name, else its accelerator), summary_only (always true: the mark a reader keeps
-- beside the figures), the accelerators it used (results.accelerators) and its
-- parallelism, its load parsed from input_shape as serving_points parses it, and its figures: TTFT,
-- TPOT, ITL (between chunks, itl_chunk_s) and E2E mean / p50 / p90 / p99 / std where published,
-- interactivity (tokens/s per user: 1 / TPOT p50) and the throughputs per GPU as the source divided
-- them (source_definitions says over which GPUs); accelerator_power_w: the mean board power per GPU
-- a source measured (InferenceX's avg_power_w), provisioned_power_w: a system's provisioned power by
-- its rules (MLPerf Endpoints' system_power.json). A summary-only import whose figures are in its
-- tool's own names (vllm bench serve without --save-detailed: ttft_ms, ...) has none of these
-- figures and is not a row here (serving_source_figures lists it).
CREATE OR REPLACE VIEW serving_published_points AS
WITH latest AS (
    SELECT r.*, ru.started_at AS run_started_at, h.device_name AS accelerator, h.kind AS hardware_kind,
           coalesce(h.system_name, h.device_name)                     AS hardware_name,
           src.tool || coalesce(' ' || src.tool_version, '')          AS measured_by,
           src.format                                                 AS source_format,
           src.summary_only
    FROM results r
    JOIN runs ru USING (run_id)
    JOIN hardware h USING (hardware_id)
    JOIN result_sources src ON src.result_id = r.result_id AND src.summary_only
    WHERE r.status = 'ok' AND r.validity = 'valid' AND bdb_serving_point(r.mode)
    QUALIFY row_number() OVER (PARTITION BY r.series_id ORDER BY ru.started_at DESC, r.result_id DESC) = 1
),
f AS (
    SELECT result_id AS figures_result_id,
           max(value) FILTER (WHERE metric = 'ttft_s' AND statistic = 'mean')        AS ttft_mean_s,
           max(value) FILTER (WHERE metric = 'ttft_s' AND statistic = 'median')      AS ttft_p50_s,
           max(value) FILTER (WHERE metric = 'ttft_s' AND statistic = 'p90')         AS ttft_p90_s,
           max(value) FILTER (WHERE metric = 'ttft_s' AND statistic = 'p99')         AS ttft_p99_s,
           max(value) FILTER (WHERE metric = 'ttft_s' AND statistic = 'stddev')      AS ttft_std_s,
           max(value) FILTER (WHERE metric = 'tpot_s' AND statistic = 'mean')        AS tpot_mean_s,
           max(value) FILTER (WHERE metric = 'tpot_s' AND statistic = 'median')      AS tpot_p50_s,
           max(value) FILTER (WHERE metric = 'tpot_s' AND statistic = 'p90')         AS tpot_p90_s,
           max(value) FILTER (WHERE metric = 'tpot_s' AND statistic = 'p99')         AS tpot_p99_s,
           max(value) FILTER (WHERE metric = 'tpot_s' AND statistic = 'stddev')      AS tpot_std_s,
           max(value) FILTER (WHERE metric = 'itl_chunk_s' AND statistic = 'mean')   AS itl_mean_s,
           max(value) FILTER (WHERE metric = 'itl_chunk_s' AND statistic = 'median') AS itl_p50_s,
           max(value) FILTER (WHERE metric = 'itl_chunk_s' AND statistic = 'p90')    AS itl_p90_s,
           max(value) FILTER (WHERE metric = 'itl_chunk_s' AND statistic = 'p99')    AS itl_p99_s,
           max(value) FILTER (WHERE metric = 'itl_chunk_s' AND statistic = 'stddev') AS itl_std_s,
           max(value) FILTER (WHERE metric = 'e2e_s' AND statistic = 'mean')         AS e2e_mean_s,
           max(value) FILTER (WHERE metric = 'e2e_s' AND statistic = 'median')       AS e2e_p50_s,
           max(value) FILTER (WHERE metric = 'e2e_s' AND statistic = 'p90')          AS e2e_p90_s,
           max(value) FILTER (WHERE metric = 'e2e_s' AND statistic = 'p99')          AS e2e_p99_s,
           max(value) FILTER (WHERE metric = 'e2e_s' AND statistic = 'stddev')       AS e2e_std_s,
           max(value) FILTER (WHERE metric = 'interactivity' AND statistic = 'median') AS interactivity,
           max(value) FILTER (WHERE metric = 'total_throughput_per_gpu')             AS total_throughput_per_gpu,
           max(value) FILTER (WHERE metric = 'output_throughput_per_gpu')            AS output_throughput_per_gpu,
           max(value) FILTER (WHERE metric = 'input_throughput_per_gpu')             AS input_throughput_per_gpu,
           max(value) FILTER (WHERE metric = 'accelerator_power_w' AND statistic = 'mean') AS accelerator_power_w,
           max(value) FILTER (WHERE metric = 'power_w' AND statistic = 'provisioned') AS provisioned_power_w
    FROM source_statistics
    WHERE result_id IN (SELECT result_id FROM latest)
    GROUP BY result_id
    HAVING count(*) FILTER (WHERE metric IN ('ttft_s', 'tpot_s', 'itl_chunk_s', 'e2e_s', 'interactivity',
                                             'total_throughput_per_gpu', 'output_throughput_per_gpu',
                                             'input_throughput_per_gpu')) > 0
)
SELECT l.result_id, l.series_id, l.run_id, l.run_started_at,
       l.hardware_id, l.hardware_name, l.accelerator, l.hardware_kind,
       l.model_id, coalesce(json_extract_string(l.options, '$.engine'), l.backend)  AS engine,
       l.precision, l.mode                                                          AS endpoint,
       l.options, l.options_id, l.measured_by, l.source_format, l.summary_only,
       l.accelerators,
       l.parallelism,
       json_extract_string(l.options, '$.speculative_decoding')                     AS speculative_decoding,
       CASE regexp_extract(l.input_shape, '(^|,)(concurrency|rate)=', 2)
            WHEN 'concurrency' THEN 'concurrency' WHEN 'rate' THEN 'rate' END      AS load_kind,
       TRY_CAST(nullif(regexp_extract(l.input_shape, '(^|,)concurrency=([0-9]+)', 2), '') AS INTEGER)
                                                                                    AS concurrency,
       l.input_shape,
       TRY_CAST(nullif(regexp_extract(l.input_shape, '(^|,)in=([0-9]+)', 2), '') AS INTEGER)  AS in_tokens,
       TRY_CAST(nullif(regexp_extract(l.input_shape, '(^|,)out=([0-9]+)', 2), '') AS INTEGER) AS out_tokens,
       f.ttft_mean_s, f.ttft_p50_s, f.ttft_p90_s, f.ttft_p99_s, f.ttft_std_s, f.tpot_mean_s, f.tpot_p50_s,
       f.tpot_p90_s, f.tpot_p99_s, f.tpot_std_s, f.itl_mean_s, f.itl_p50_s, f.itl_p90_s, f.itl_p99_s,
       f.itl_std_s, f.e2e_mean_s, f.e2e_p50_s, f.e2e_p90_s, f.e2e_p99_s, f.e2e_std_s, f.interactivity,
       f.total_throughput_per_gpu, f.output_throughput_per_gpu, f.input_throughput_per_gpu,
       f.accelerator_power_w, f.provisioned_power_w
FROM latest l
JOIN f ON f.figures_result_id = l.result_id;

-- serving_published_frontier: per system (hardware), engine, precision and speculative decoding,
-- for one model, endpoint and in/out token counts, the published points on its Pareto front of total
-- token throughput per GPU against interactivity across every parallelism and concurrency it was
-- published at (as InferenceX draws a system's curve): no other point of it beats it (bdb_beats:
-- both at least as high and one higher). on_overall_front: no point of any system beats it either.
-- Total throughput per GPU is over every GPU of the point, so it compares across systems and
-- deployments; a multinode point's output (input) throughput per GPU is over its decode (prefill)
-- GPUs only.
CREATE OR REPLACE VIEW serving_published_frontier AS
WITH p AS (
    SELECT * FROM serving_published_points
    WHERE total_throughput_per_gpu IS NOT NULL AND interactivity IS NOT NULL
),
beaten AS (
    -- (point, whether a point that beats it is of the same system, engine, precision, decoding)
    SELECT a.result_id,
           max(CASE WHEN b.hardware_id = a.hardware_id AND b.engine = a.engine AND b.precision = a.precision
                     AND b.speculative_decoding IS NOT DISTINCT FROM a.speculative_decoding THEN 1 ELSE 0 END) AS by_own
    FROM p a
    JOIN p b
      ON b.model_id = a.model_id AND b.endpoint = a.endpoint
     AND b.in_tokens IS NOT DISTINCT FROM a.in_tokens AND b.out_tokens IS NOT DISTINCT FROM a.out_tokens
     AND bdb_beats(b.total_throughput_per_gpu, b.interactivity, a.total_throughput_per_gpu, a.interactivity)
    GROUP BY a.result_id
)
SELECT p.*, x.result_id IS NULL AS on_overall_front
FROM p
LEFT JOIN beaten x ON x.result_id = p.result_id
WHERE coalesce(x.by_own, 0) = 0;
