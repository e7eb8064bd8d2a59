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
--   value_per_system: value as is; value_per_accelerator, value_per_watt: the value normalised per
--       accelerator and per watt (bdb_normalised: a throughput / devices, / power_w; a latency is not
--       divided).
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
),
placed AS (
    SELECT x.*,
           h.device_name                                                 AS hardware_name,
           h.kind                                                        AS hardware_kind,
           coalesce(h.system_name, h.device_name)                        AS system_name,
           CASE WHEN h.kind = 'cpu' THEN NULL ELSE h.device_name END     AS accelerator,
           h.accelerators_per_node,
           h.nodes,
           CASE WHEN x.accelerators >= 1 THEN x.accelerators WHEN x.accelerators = 0 THEN 1 END AS devices
    FROM rows x
    JOIN hardware h ON h.hardware_id = x.hardware_id
)
SELECT p.*,
       p.value                                                                            AS value_per_system,
       bdb_normalised('accelerator', p.value, p.higher_is_better, p.devices, p.power_w, NULL) AS value_per_accelerator,
       bdb_normalised('watt', p.value, p.higher_is_better, p.devices, p.power_w, NULL)        AS value_per_watt
FROM placed p;

-- bdb_system_per(normalisation, prices, accelerator_prices, models, hardware): system_results under
-- the model and hardware lists (hardware by name, id or system name; NULL for all), each figure
-- normalised one way (a name of bdb_normalisations()) and ranked: the one normalisation behind
-- report --optimal-hardware --per (system_ranking, bdb_optimal_per) and the dashboard's systems page.
--   price_per_hour: bdb_price_per_hour (prices: MAP system or hardware name -> USD per hour;
--       accelerator_prices: MAP accelerator name -> USD per accelerator-hour).
--   normalised: bdb_normalised; normalised_unit: the unit, a throughput's with the normalisation's
--       unit_suffix; normalised_ci_low/high: a measured figure's interval normalised alike (a published
--       figure has none); missing: why a figure has no normalised value, and so no rank.
--   system_rank: best first among the figures of one model, input shape, batch size and unit.
CREATE OR REPLACE MACRO bdb_system_per(normalisation, prices, accelerator_prices, models, hardware) AS TABLE
WITH priced AS (
    SELECT r.*,
           bdb_price_per_hour(prices, accelerator_prices, r.system_name, r.hardware_name, r.accelerator, r.devices)
               AS price_per_hour
    FROM system_results r
    WHERE (models IS NULL OR list_contains(models, r.model_id))
      AND (hardware IS NULL OR list_contains(hardware, r.hardware_name) OR list_contains(hardware, r.hardware_id)
           OR list_contains(hardware, r.system_name))
),
divided AS (
    SELECT p.*,
           bdb_normalised(normalisation, p.value, p.higher_is_better, p.devices, p.power_w, p.price_per_hour)
               AS normalised,
           p.unit || CASE WHEN p.higher_is_better THEN d.unit_suffix ELSE '' END AS normalised_unit,
           CASE WHEN bdb_normalised(normalisation, p.value, p.higher_is_better, p.devices, p.power_w,
                                    p.price_per_hour) IS NULL
                THEN CASE WHEN p.higher_is_better THEN d.missing ELSE 'a latency: not divided' END END AS missing
    FROM priced p
    LEFT JOIN bdb_normalisations() d ON d.name = normalisation
)
SELECT n.*,
       CASE WHEN n.value > 0 THEN n.value_ci_low * n.normalised / n.value END  AS normalised_ci_low,
       CASE WHEN n.value > 0 THEN n.value_ci_high * n.normalised / n.value END AS normalised_ci_high,
       CASE WHEN n.normalised IS NOT NULL THEN
            rank() OVER (PARTITION BY n.model_id, n.input_shape, n.batch_size, n.normalised_unit, n.normalised IS NULL
                         ORDER BY CASE WHEN n.higher_is_better THEN -n.normalised ELSE n.normalised END) END
           AS system_rank
FROM divided n;
