-- Serving benchmarks (backend 'openai': an OpenAI-compatible endpoint under load; issue 31).
--
-- serving_points: one row per serving load point: the latest valid result of each serving series
-- (results_latest, backend 'openai'), its load parsed from input_shape ('in=128,out=64,concurrency=4'
-- closed loop; 'in=128,out=64,rate=poisson:2.0' open loop), and per-request statistics from
-- result_metrics (ingest's statistics over every request of every process, pooled):
--   ttft/tpot/itl (per token: itl_token_s)/e2e p50, p90, p99. A percentile needs its samples
--   (p90: 10, p99: 100: bdb_pct_min_n) AND as many completed requests, so an ITL p99 over 5000 gaps of
--   30 requests is NULL too; never the maximum.
--   *_p50_ci_low/high: the 95 % distribution-free (order-statistic) CI of the median over the pooled
--   request samples; TTFT, the primary metric, takes the result's own CI: with --repeats K the
--   hierarchical bootstrap over processes then requests (ttft_ci_method says which).
--   interactivity: 1 / TPOT p50 (tokens/s seen by one user), its CI the inverted TPOT CI.
--   devices: GPUs the server used: options.devices, else options.tensor_parallel_size, else the
--   --tensor-parallel-size / --tp-size / --tp of its command template (options.server), else 1;
--   *_per_device: the load point's throughput over them.
-- device_power_w: the mean power of the server's device over the load point (its energy counter:
-- NVML on CUDA, RAPL on a CPU; one device, taken for each of the server's devices): its
-- device_power_w, else its energy_j over the counter's window (extra.energy_window_s) for results
-- recorded before benchdb wrote device_power_w.
-- hardware_name: the server's (options.server_hardware, declared with --url), else the hardware the
-- result ran on. engine: options.engine (the serving program), else 'openai' (a server at --url);
-- engine_version: extra.server.version (what the runner recorded of the server it started).
--   Throughputs are per load point (one row per process: the median over processes).
-- errors: failed requests (request_error rows); n_requests = completed (e2e_s) + failed.
-- figures_window: 'steady state' where the load point found a steady-state window (extra.steady_state,
-- benchdb.schema.steady_state; its steady_ttft_s requests recorded): TTFT and TPOT (p50 with CI, p90,
-- p99, the percentiles' minimum counts over the window's requests), interactivity and the request /
-- output / total throughputs are then the window's (steady_* metrics), as MLPerf Endpoints reports
-- them; else 'whole window'. ITL, E2E, goodput and the request counts are always the whole window's;
-- whole_ttft_p50_s, whole_tpot_p50_s and whole_output_throughput keep the whole window's beside them.
-- steady_state: 'found', 'none' (steady_state_reason says why: drifting, no plateau) or NULL (not
-- sought: an import whose requests carry no send times, or a result from before steady states). The window's bounds are seconds from the
-- measurement window's start. curve_*: the point's place on a `--curve` (settings.curve: its index,
-- the curve's points, its region, the probe's highest useful concurrency); workload: the canonical
-- `--workload` (workload_kind its kind); ttft_first_turn_p50_s, ttft_later_turns_p50_s,
-- session_p50_s, cache_hit_pct, shared_prefix_pct and session_goodput: a workload's figures.
-- measured_by: 'benchdb' for benchdb's own runs, else the tool an imported load point came from
-- ('guidellm 0.8.1', 'vllm bench serve 0.11.0', ...; result_sources): every figure here is
-- recomputed by benchdb from its requests either way, so the rows compare (source_figures: the
-- tool's own, in its definitions). A summary-only import has no requests and is not a row here.
CREATE OR REPLACE VIEW serving_points AS
WITH pts AS (
    SELECT r.*,
           coalesce(lower(trim(json_extract_string(r.options, '$.server_hardware'))), r.hardware_name)
                                                                                      AS server_hardware_name,
           coalesce(json_extract_string(r.options, '$.engine'), r.backend)            AS engine,
           json_extract_string(r.extra, '$.server.version')                          AS engine_version,
           regexp_extract(r.input_shape, '(^|,)(concurrency|rate)=', 2)              AS load_kind_raw,
           TRY_CAST(nullif(regexp_extract(r.input_shape, '(^|,)concurrency=([0-9.]+)', 2), '') AS DOUBLE)
                                                                                      AS concurrency_v,
           nullif(regexp_extract(r.input_shape, '(^|,)rate=([a-z_]+):', 2), '')       AS arrival,
           TRY_CAST(nullif(regexp_extract(r.input_shape, '(^|,)rate=([a-z_]+:)?([0-9.]+)', 3), '') AS DOUBLE)
                                                                                      AS rate_v,
           TRY_CAST(nullif(regexp_extract(r.input_shape, '(^|,)in=([0-9]+)', 2), '') AS INTEGER)  AS in_tokens,
           TRY_CAST(nullif(regexp_extract(r.input_shape, '(^|,)out=([0-9]+)', 2), '') AS INTEGER) AS out_tokens,
           greatest(coalesce(TRY_CAST(json_extract_string(r.options, '$.devices') AS INTEGER),
                             TRY_CAST(json_extract_string(r.options, '$.tensor_parallel_size') AS INTEGER),
                             TRY_CAST(nullif(regexp_extract(coalesce(json_extract_string(r.options, '$.server'), ''),
                                 '(--tensor-parallel-size|--tp-size|--tp|-tp)[= ]+([0-9]+)', 2), '') AS INTEGER),
                             1), 1)                                                   AS devices,
           CASE WHEN src.result_id IS NULL THEN 'benchdb'
                ELSE src.tool || coalesce(' ' || src.tool_version, '') END             AS measured_by,
           src.format                                                                 AS source_format,
           json_extract_string(r.options, '$.workload')                               AS workload,
           TRY_CAST(json_extract_string(r.extra, '$.steady_state.found') AS BOOLEAN)  AS steady_found,
           json_extract_string(r.extra, '$.steady_state.reason')                      AS steady_reason,
           TRY_CAST(json_extract_string(r.extra, '$.steady_state.start_s') AS DOUBLE) AS steady_start,
           TRY_CAST(json_extract_string(r.extra, '$.steady_state.end_s') AS DOUBLE)   AS steady_end,
           TRY_CAST(json_extract_string(r.settings, '$.curve.point') AS INTEGER)     AS curve_point,
           TRY_CAST(json_extract_string(r.settings, '$.curve.of') AS INTEGER)        AS curve_points,
           json_extract_string(r.settings, '$.curve.region')                          AS curve_region,
           TRY_CAST(json_extract_string(r.settings, '$.curve.highest_useful') AS INTEGER) AS curve_highest_useful
    FROM results_latest r
    LEFT JOIN result_sources src ON src.result_id = r.result_id
    WHERE bdb_serving_point(r.mode)
),
m AS (
    SELECT result_id AS metrics_result_id,
           max(median)         FILTER (WHERE metric = 'ttft_s')             AS ttft_p50,
           max(median_ci_low)  FILTER (WHERE metric = 'ttft_s')             AS ttft_lo,
           max(median_ci_high) FILTER (WHERE metric = 'ttft_s')             AS ttft_hi,
           max(p90)            FILTER (WHERE metric = 'ttft_s')             AS ttft_p90,
           max(p99)            FILTER (WHERE metric = 'ttft_s')             AS ttft_p99,
           max(median)         FILTER (WHERE metric = 'tpot_s')             AS tpot_p50,
           max(median_ci_low)  FILTER (WHERE metric = 'tpot_s')             AS tpot_lo,
           max(median_ci_high) FILTER (WHERE metric = 'tpot_s')             AS tpot_hi,
           max(p90)            FILTER (WHERE metric = 'tpot_s')             AS tpot_p90,
           max(p99)            FILTER (WHERE metric = 'tpot_s')             AS tpot_p99,
           max(median)         FILTER (WHERE metric = 'itl_token_s')        AS itl_p50,
           max(median_ci_low)  FILTER (WHERE metric = 'itl_token_s')        AS itl_lo,
           max(median_ci_high) FILTER (WHERE metric = 'itl_token_s')        AS itl_hi,
           max(p90)            FILTER (WHERE metric = 'itl_token_s')        AS itl_p90,
           max(p99)            FILTER (WHERE metric = 'itl_token_s')        AS itl_p99,
           max(n)              FILTER (WHERE metric = 'e2e_s')              AS e2e_n,
           max(median)         FILTER (WHERE metric = 'e2e_s')              AS e2e_p50,
           max(median_ci_low)  FILTER (WHERE metric = 'e2e_s')              AS e2e_lo,
           max(median_ci_high) FILTER (WHERE metric = 'e2e_s')              AS e2e_hi,
           max(p90)            FILTER (WHERE metric = 'e2e_s')              AS e2e_p90,
           max(p99)            FILTER (WHERE metric = 'e2e_s')              AS e2e_p99,
           max(mean)           FILTER (WHERE metric = 'input_tokens')       AS input_tokens_mean,
           max(mean)           FILTER (WHERE metric = 'output_tokens')      AS output_tokens_mean,
           CAST(max(round(mean * n)) FILTER (WHERE metric = 'request_error') AS BIGINT) AS errors,
           max(median)         FILTER (WHERE metric = 'request_throughput') AS request_throughput,
           max(median)         FILTER (WHERE metric = 'output_throughput')  AS output_throughput,
           max(median)         FILTER (WHERE metric = 'total_throughput')   AS total_throughput,
           max(median)         FILTER (WHERE metric = 'goodput')            AS goodput,
           max(median)         FILTER (WHERE metric = 'window_s')           AS window_s,
           max(median)         FILTER (WHERE metric = 'client_cpu_pct')     AS client_cpu_pct,
           max(median)         FILTER (WHERE metric = 'energy_per_output_token_j') AS energy_per_output_token_j,
           max(median)         FILTER (WHERE metric = 'energy_j')           AS energy_j,
           max(median)         FILTER (WHERE metric = 'device_power_w')     AS measured_device_power_w,
           max(n)              FILTER (WHERE metric = 'steady_ttft_s')      AS sttft_n,
           max(median)         FILTER (WHERE metric = 'steady_ttft_s')      AS sttft_p50,
           max(median_ci_low)  FILTER (WHERE metric = 'steady_ttft_s')      AS sttft_lo,
           max(median_ci_high) FILTER (WHERE metric = 'steady_ttft_s')      AS sttft_hi,
           max(p90)            FILTER (WHERE metric = 'steady_ttft_s')      AS sttft_p90,
           max(p99)            FILTER (WHERE metric = 'steady_ttft_s')      AS sttft_p99,
           max(n)              FILTER (WHERE metric = 'steady_tpot_s')      AS stpot_n,
           max(median)         FILTER (WHERE metric = 'steady_tpot_s')      AS stpot_p50,
           max(median_ci_low)  FILTER (WHERE metric = 'steady_tpot_s')      AS stpot_lo,
           max(median_ci_high) FILTER (WHERE metric = 'steady_tpot_s')      AS stpot_hi,
           max(p90)            FILTER (WHERE metric = 'steady_tpot_s')      AS stpot_p90,
           max(p99)            FILTER (WHERE metric = 'steady_tpot_s')      AS stpot_p99,
           max(median)         FILTER (WHERE metric = 'steady_request_throughput') AS s_request_throughput,
           max(median)         FILTER (WHERE metric = 'steady_output_throughput')  AS s_output_throughput,
           max(median)         FILTER (WHERE metric = 'steady_total_throughput')   AS s_total_throughput,
           max(median)         FILTER (WHERE metric = 'ttft_first_turn_s')  AS ttft_first_turn_p50_s,
           max(median)         FILTER (WHERE metric = 'ttft_later_turns_s') AS ttft_later_turns_p50_s,
           max(median)         FILTER (WHERE metric = 'session_s')          AS session_p50_s,
           max(median)         FILTER (WHERE metric = 'cache_hit_pct')      AS cache_hit_pct,
           max(median)         FILTER (WHERE metric = 'shared_prefix_pct')  AS shared_prefix_pct,
           max(median)         FILTER (WHERE metric = 'session_goodput')    AS session_goodput
    FROM result_metrics
    WHERE result_id IN (SELECT result_id FROM pts)
    GROUP BY result_id
),
j AS (
    SELECT p.*, m.*,
           coalesce(m.e2e_n, p.n, 0)                                              AS n_completed,
           coalesce(m.errors, 0)                                                  AS n_errors,
           coalesce(p.steady_found, false) AND m.sttft_p50 IS NOT NULL             AS steady,
           -- the whole window's TTFT median and CI: the result's own where TTFT is its primary metric
           CASE WHEN p.metric = 'ttft_s' THEN p.median ELSE m.ttft_p50 END         AS w_ttft_p50,
           CASE WHEN p.metric = 'ttft_s' THEN p.median_ci_low ELSE m.ttft_lo END   AS w_ttft_lo,
           CASE WHEN p.metric = 'ttft_s' THEN p.median_ci_high ELSE m.ttft_hi END  AS w_ttft_hi
    FROM pts p
    LEFT JOIN m ON m.metrics_result_id = p.result_id
),
-- h: the figures a load point is read by: over its steady-state window where one was found (and its
-- TTFT requests were recorded), else over its whole window. ITL, E2E and goodput stay whole-window.
h AS (
    SELECT j.*,
           CASE WHEN steady THEN sttft_p50 ELSE w_ttft_p50 END                    AS h_ttft_p50,
           CASE WHEN steady THEN sttft_lo ELSE w_ttft_lo END                      AS h_ttft_lo,
           CASE WHEN steady THEN sttft_hi ELSE w_ttft_hi END                      AS h_ttft_hi,
           CASE WHEN steady THEN sttft_n ELSE n_completed END                     AS h_ttft_n,
           CASE WHEN steady THEN sttft_p90 ELSE ttft_p90 END                      AS h_ttft_p90,
           CASE WHEN steady THEN sttft_p99 ELSE ttft_p99 END                      AS h_ttft_p99,
           CASE WHEN steady THEN stpot_p50 ELSE tpot_p50 END                      AS h_tpot_p50,
           CASE WHEN steady THEN stpot_lo ELSE tpot_lo END                        AS h_tpot_lo,
           CASE WHEN steady THEN stpot_hi ELSE tpot_hi END                        AS h_tpot_hi,
           CASE WHEN steady THEN coalesce(stpot_n, 0) ELSE n_completed END        AS h_tpot_n,
           CASE WHEN steady THEN stpot_p90 ELSE tpot_p90 END                      AS h_tpot_p90,
           CASE WHEN steady THEN stpot_p99 ELSE tpot_p99 END                      AS h_tpot_p99,
           CASE WHEN steady THEN s_request_throughput ELSE request_throughput END AS h_request_throughput,
           CASE WHEN steady THEN s_output_throughput ELSE output_throughput END   AS h_output_throughput,
           CASE WHEN steady THEN s_total_throughput ELSE total_throughput END     AS h_total_throughput
    FROM j
)
SELECT result_id, series_id, run_id, run_started_at, git_commit,
       hardware_id, server_hardware_name AS hardware_name, hardware_kind, devices,
       model_id, engine, engine_version, measured_by, source_format,
       options, options_id, precision,
       mode                                                                       AS endpoint,
       CASE load_kind_raw WHEN 'concurrency' THEN 'concurrency' WHEN 'rate' THEN 'rate' END AS load_kind,
       CASE load_kind_raw WHEN 'concurrency' THEN concurrency_v WHEN 'rate' THEN rate_v END AS load_value,
       CASE WHEN load_kind_raw = 'concurrency' THEN CAST(concurrency_v AS INTEGER) END    AS concurrency,
       CASE WHEN load_kind_raw = 'rate' THEN rate_v END                           AS request_rate,
       CASE WHEN load_kind_raw = 'rate' THEN arrival END                          AS arrival,
       input_shape, in_tokens, out_tokens, input_tokens_mean, output_tokens_mean,
       workload, split_part(workload, ':', 1)                                     AS workload_kind,
       curve_point, curve_points, curve_region, curve_highest_useful,
       n_completed + n_errors                                                     AS n_requests,
       n_completed,
       n_errors                                                                   AS errors,
       CASE WHEN n_completed + n_errors > 0 THEN n_errors / (n_completed + n_errors) END AS error_rate,
       repeats,
       CASE WHEN steady THEN 'steady state' ELSE 'whole window' END               AS figures_window,
       CASE steady_found WHEN true THEN 'found' WHEN false THEN 'none' END        AS steady_state,
       steady_reason                                                              AS steady_state_reason,
       CASE WHEN steady THEN steady_start END                                     AS steady_start_s,
       CASE WHEN steady THEN steady_end END                                       AS steady_end_s,
       CASE WHEN steady THEN sttft_n END                                          AS steady_requests,
       h_ttft_p50                                                                 AS ttft_p50_s,
       h_ttft_lo                                                                  AS ttft_p50_ci_low_s,
       h_ttft_hi                                                                  AS ttft_p50_ci_high_s,
       CASE WHEN h_ttft_n >= bdb_pct_min_n(0.90) THEN h_ttft_p90 END              AS ttft_p90_s,
       CASE WHEN h_ttft_n >= bdb_pct_min_n(0.99) THEN h_ttft_p99 END              AS ttft_p99_s,
       CASE WHEN metric = 'ttft_s' AND NOT steady THEN ci_method ELSE 'order_statistics' END AS ttft_ci_method,
       h_tpot_p50                                                                 AS tpot_p50_s,
       h_tpot_lo                                                                  AS tpot_p50_ci_low_s,
       h_tpot_hi                                                                  AS tpot_p50_ci_high_s,
       CASE WHEN h_tpot_n >= bdb_pct_min_n(0.90) THEN h_tpot_p90 END              AS tpot_p90_s,
       CASE WHEN h_tpot_n >= bdb_pct_min_n(0.99) THEN h_tpot_p99 END              AS tpot_p99_s,
       itl_p50                                                                    AS itl_p50_s,
       itl_lo                                                                     AS itl_p50_ci_low_s,
       itl_hi                                                                     AS itl_p50_ci_high_s,
       CASE WHEN n_completed >= bdb_pct_min_n(0.90) THEN itl_p90 END              AS itl_p90_s,
       CASE WHEN n_completed >= bdb_pct_min_n(0.99) THEN itl_p99 END              AS itl_p99_s,
       e2e_p50                                                                    AS e2e_p50_s,
       e2e_lo                                                                     AS e2e_p50_ci_low_s,
       e2e_hi                                                                     AS e2e_p50_ci_high_s,
       CASE WHEN n_completed >= bdb_pct_min_n(0.90) THEN e2e_p90 END              AS e2e_p90_s,
       CASE WHEN n_completed >= bdb_pct_min_n(0.99) THEN e2e_p99 END              AS e2e_p99_s,
       h_request_throughput                                                       AS request_throughput,
       h_output_throughput                                                        AS output_throughput,
       h_total_throughput                                                         AS total_throughput,
       h_total_throughput - h_output_throughput                                   AS input_throughput,
       goodput,
       window_s,
       ttft_first_turn_p50_s, ttft_later_turns_p50_s, session_p50_s, cache_hit_pct, shared_prefix_pct,
       session_goodput,
       w_ttft_p50                                                                 AS whole_ttft_p50_s,
       tpot_p50                                                                   AS whole_tpot_p50_s,
       output_throughput                                                          AS whole_output_throughput,
       client_cpu_pct,
       energy_per_output_token_j,
       coalesce(measured_device_power_w, energy_j / nullif(TRY_CAST(json_extract(extra, '$.energy_window_s[1]') AS DOUBLE)
                                           - TRY_CAST(json_extract(extra, '$.energy_window_s[0]') AS DOUBLE), 0))
                                                                                  AS device_power_w,
       CASE WHEN h_tpot_p50 > 0 THEN 1.0 / h_tpot_p50 END                         AS interactivity,
       CASE WHEN h_tpot_hi > 0 THEN 1.0 / h_tpot_hi END                           AS interactivity_ci_low,
       CASE WHEN h_tpot_lo > 0 THEN 1.0 / h_tpot_lo END                           AS interactivity_ci_high,
       h_request_throughput / devices                                             AS request_throughput_per_device,
       h_output_throughput / devices                                              AS output_throughput_per_device,
       h_total_throughput / devices                                               AS total_throughput_per_device
FROM h;

-- serving_frontier: per configuration (hardware x engine x precision x options, for one model,
-- endpoint and in/out token counts) the load points on its Pareto front of output-token throughput
-- per device against interactivity: no other point of the configuration beats it (bdb_beats: both at
-- least as high and one higher). on_overall_front: no configuration's point for the same model,
-- endpoint and in/out tokens beats it either (the hardware/engine choices worth making).
CREATE OR REPLACE VIEW serving_frontier AS
WITH p AS (
    SELECT * FROM serving_points
    WHERE output_throughput_per_device IS NOT NULL AND interactivity IS NOT NULL
),
beaten AS (
    -- (point, whether the point that beats it is of the same configuration)
    SELECT a.result_id,
           max(CASE WHEN b.hardware_id = a.hardware_id AND b.engine = a.engine AND b.precision = a.precision
                     AND b.options_id IS NOT DISTINCT FROM a.options_id THEN 1 ELSE 0 END) AS by_own
    FROM p a
    JOIN p b
      ON b.model_id = a.model_id AND b.endpoint = a.endpoint
     AND b.in_tokens IS NOT DISTINCT FROM a.in_tokens AND b.out_tokens IS NOT DISTINCT FROM a.out_tokens
     AND bdb_beats(b.output_throughput_per_device, b.interactivity, a.output_throughput_per_device, a.interactivity)
    GROUP BY a.result_id
)
SELECT p.*, x.result_id IS NULL AS on_overall_front
FROM p
LEFT JOIN beaten x ON x.result_id = p.result_id
WHERE coalesce(x.by_own, 0) = 0;
