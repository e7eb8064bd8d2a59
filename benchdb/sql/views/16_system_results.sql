-- system_results: per series (results.series_id), its latest valid successful result's headline
-- figure, whether benchdb measured it or a source published it, on its system, with the figure
-- normalised per system, per accelerator and per watt. Serving load points are not rows here (their
-- figures are per load point: serving_points, serving_frontier).
--   summary_only false (measured): a benchdb timing result (results_latest): value = throughput in
--       items/s at the median (higher is better), value_ci_low/high from the median's 95 % interval
--       (batch / median_ci_high .. batch / median_ci_low), n, repeats, ci_method as results has them.
--   summary_only true (published, result_sources.summary_only): value = the source's own statistic
--       'value' of the result's primary metric (source_statistics: MLPerf's tokens/s, samples/s or a
--       latency in s), with its unit; no samples, so n = 0 and every interval and median is NULL --
--       nothing here ever puts a published figure into an interval as if it had samples.
--   higher_is_better: false for a latency (unit 's'), true otherwise.
--   accelerators: the accelerators the result ran on (results.accelerators); devices: what a figure
--       is divided by per accelerator: the accelerators, or 1 for a CPU-only system (0 accelerators:
--       its CPU is its device); NULL where unknown (hardware declared only by name).
--   power_w: measured power in W where known: the median of benchdb's power_w samples, or the
--       source's power_w mean (MLPerf power runs: the system's).
--   value_per_system: value as is; value_per_accelerator: value / devices for a throughput, the value
--       itself for a latency (a latency is not divided); value_per_watt: a throughput / power_w.
CREATE OR REPLACE VIEW system_results AS
WITH published AS (
    SELECT r.*,
           ru.started_at                                             AS run_started_at,
           ru.git_commit,
           ru.host,
           src.tool || coalesce(' ' || src.tool_version, '')         AS source_tool
    FROM results r
    JOIN runs ru USING (run_id)
    JOIN result_sources src ON src.result_id = r.result_id
    WHERE r.status = 'ok' AND r.validity = 'valid' AND src.summary_only
    QUALIFY row_number() OVER (PARTITION BY r.series_id ORDER BY ru.started_at DESC, r.result_id DESC) = 1
),
published_figures AS (
    SELECT s.result_id,
           max(s.value) FILTER (WHERE s.metric = p.metric AND s.statistic = 'value')              AS value,
           max(s.unit) FILTER (WHERE s.metric = p.metric AND s.statistic = 'value')               AS unit,
           max(s.value) FILTER (WHERE s.metric = 'power_w' AND s.statistic IN ('mean', 'value'))  AS power_w
    FROM source_statistics s
    JOIN published p ON p.result_id = s.result_id
    GROUP BY s.result_id
),
rows AS (
    SELECT r.result_id, r.series_id, r.run_id, r.run_started_at, r.git_commit, r.host,
           r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size, r.input_shape,
           r.options, r.options_id, r.hardware_id, r.accelerators, r.parallelism,
           false                                                     AS summary_only,
           'benchdb'                                                 AS measured_by,
           r.metric                                                  AS headline_metric,
           r.throughput                                              AS value,
           'items/s'                                                 AS unit,
           true                                                      AS higher_is_better,
           CASE WHEN r.median_ci_high > 0 THEN r.batch_size / r.median_ci_high END AS value_ci_low,
           CASE WHEN r.median_ci_low > 0 THEN r.batch_size / r.median_ci_low END   AS value_ci_high,
           r.n, r.repeats, r.ci_method, r.median, r.median_ci_low, r.median_ci_high, r.p90, r.p99,
           r.throughput, r.peak_memory_bytes, r.energy_per_item_j, r.power_w
    FROM results_latest r
    LEFT JOIN result_sources src ON src.result_id = r.result_id
    WHERE NOT coalesce(src.summary_only, false) AND NOT bdb_serving_point(r.mode)
    UNION ALL
    SELECT p.result_id, p.series_id, p.run_id, p.run_started_at, p.git_commit, p.host,
           p.model_id, p.backend, p.device, p.mode, p.precision, p.batch_size, p.input_shape,
           p.options, p.options_id, p.hardware_id, p.accelerators, p.parallelism,
           true, p.source_tool, p.metric, f.value, f.unit, coalesce(f.unit <> 's', true),
           NULL, NULL,
           0, p.repeats, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, f.power_w
    FROM published p
    JOIN published_figures f ON f.result_id = p.result_id
    WHERE f.value IS NOT NULL AND NOT bdb_serving_point(p.mode)
)
SELECT x.*,
       h.device_name                                                 AS hardware_name,
       h.kind                                                        AS hardware_kind,
       coalesce(h.system_name, h.device_name)                        AS system_name,
       CASE WHEN h.kind = 'cpu' THEN NULL ELSE h.device_name END     AS accelerator,
       h.accelerators_per_node,
       h.nodes,
       CASE WHEN x.accelerators >= 1 THEN x.accelerators WHEN x.accelerators = 0 THEN 1 END AS devices,
       x.value                                                       AS value_per_system,
       CASE WHEN NOT x.higher_is_better THEN x.value
            WHEN x.accelerators >= 1 THEN x.value / x.accelerators
            WHEN x.accelerators = 0 THEN x.value END                 AS value_per_accelerator,
       CASE WHEN x.higher_is_better AND x.power_w > 0 THEN x.value / x.power_w END AS value_per_watt
FROM rows x
JOIN hardware h ON h.hardware_id = x.hardware_id;
