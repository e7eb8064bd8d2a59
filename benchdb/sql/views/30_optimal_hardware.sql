-- bdb_optimal(objective, max_latency_s, max_memory_bytes, prices, models, hardware), and
-- bdb_optimal_under(the same, max_accuracy_drop) with an accuracy constraint, and
-- bdb_optimal_per(objective, per, max_latency_s, max_memory_bytes, prices, accelerator_prices, models,
-- hardware, max_accuracy_drop) with a throughput normalised per system / accelerator / watt / cost:
-- per model, batch size and input shape, the best candidate (hardware + backend + mode +
-- precision) from system_results under the constraints, the runner-up and the margin. A candidate is
-- benchdb's own measurement (results_latest) or a published summary-only figure (summary_only):
-- the latter has no median and no interval, so a margin involving one is a ratio of figures with
-- no interval (margin_basis 'published', verdict 'unconfirmed'), never one made to look measured.
--   per ('throughput' only; the others ignore it): a name of bdb_normalisations() (system, the figure
--              as is, by default), the figure normalised by bdb_system_per (the system's price per
--              hour: prices by system or hardware name, else accelerator_prices by accelerator name x
--              accelerators).
--   objective: 'throughput' (items/s, or a published figure's unit: tokens/s; higher is better), 'latency' (median s), 'energy'
--              (J per item, needs power samples) or 'cost' (USD per million items, needs a
--              price for the hardware in prices: MAP(system or hardware name -> USD per hour), else in
--              accelerator_prices: MAP(accelerator name -> USD per accelerator-hour) x accelerators).
--   max_latency_s, max_memory_bytes: NULL for no limit.
--   max_accuracy_drop: NULL for no limit; else a result that is not fp32 counts only with an
--              agreement with fp32 (result_accuracy) whose drop is at most this (0.01 = 1 %).
--   models, hardware: lists to restrict to (hardware by name or id), NULL for all.
-- margin: how much better the best is than the runner-up (0.25 = 25 %).
-- How sure: the same rule as the regression gate (benchdb check). A margin gets an interval only
-- where run-to-run noise is known (margin_basis):
--   'processes': both results ran in 2+ processes (--repeats) of the same run, interleaved, so the
--       processes' spread includes the machine's drifts: the two results' hierarchical-bootstrap
--       median intervals, combined on the log scale as independent estimates;
--   'history': both series have 8+ earlier valid runs: each series' run-to-run noise (series_noise)
--       is added in quadrature to the intervals' own standard errors;
--   NULL: neither (one process, or two separate runs without history): the margin's interval is
--       NULL -- an interval from one process's iterations cannot see shifts between runs (a
--       +1.0 % [0.7, 1.4] "win" became +82 % on the next run).
-- margin_ci_low/high: the margin's 95 % interval: log(1 + margin) +- 1.96 * se, se from the above.
-- margin_verdict: 'win' (the whole interval above +5 %, the gate's default threshold), 'tie' (the
--   interval includes 0, or lies below +5 %), 'unconfirmed' (no interval, or one between 0 and 5 %),
--   NULL without a runner-up. margin_processes: the fewer processes of the two results; best_runs /
--   runner_up_runs: valid runs of each series so far. best_tail_unstable / runner_up_tail_unstable:
--   p90 > 2x or p99 > 5x the median (a tail that a median-based ranking hides).
CREATE OR REPLACE MACRO bdb_optimal_per(objective, per, max_latency_s, max_memory_bytes, prices, accelerator_prices,
                                        models, hardware, max_accuracy_drop) AS TABLE
WITH noise AS (SELECT * FROM series_noise),
normalised_systems AS (
    SELECT * FROM bdb_system_per(coalesce(per, 'system'), prices, accelerator_prices, models, hardware)
),
cand AS (
    SELECT r.*,
           coalesce(n.runs, 1) AS runs,
           n.noise,
           CASE objective
               WHEN 'throughput' THEN CASE WHEN r.higher_is_better THEN r.normalised END
               WHEN 'latency' THEN coalesce(r.median, CASE WHEN NOT r.higher_is_better THEN r.value END)
               WHEN 'energy' THEN r.energy_per_item_j
               WHEN 'cost' THEN r.price_per_hour / 3600.0 / r.throughput * 1e6
           END AS score,
           CASE objective
               WHEN 'throughput' THEN r.normalised_unit
               WHEN 'latency' THEN 's' WHEN 'energy' THEN 'J/item' WHEN 'cost' THEN 'USD/1M items'
           END AS value_unit
    FROM normalised_systems r
    LEFT JOIN noise n USING (series_id)
    LEFT JOIN result_accuracy acc USING (result_id)
    WHERE NOT bdb_serving_point(r.mode)
      AND (max_accuracy_drop IS NULL OR r.precision = 'fp32' OR acc.accuracy_drop <= max_accuracy_drop)
      AND (max_latency_s IS NULL OR r.median <= max_latency_s)
      AND (max_memory_bytes IS NULL OR r.peak_memory_bytes <= max_memory_bytes)
),
ranked AS (
    SELECT *,
           row_number() OVER (
               PARTITION BY model_id, batch_size, input_shape, value_unit
               ORDER BY CASE WHEN objective = 'throughput' THEN -score ELSE score END,
                        hardware_name, backend, mode, precision, result_id) AS rank,
           count(*) OVER (PARTITION BY model_id, batch_size, input_shape, value_unit) AS candidates
    FROM cand
    WHERE score IS NOT NULL
)
SELECT b.model_id,
       b.batch_size,
       b.input_shape,
       objective                  AS objective,
       b.value_unit               AS unit,
       b.candidates,
       b.hardware_name            AS best_hardware,
       b.backend                  AS best_backend,
       b.device                   AS best_device,
       b.mode                     AS best_mode,
       b.precision                AS best_precision,
       b.score                    AS best_value,
       b.median                   AS best_median_s,
       b.throughput               AS best_throughput,
       r.hardware_name            AS runner_up_hardware,
       r.backend                  AS runner_up_backend,
       r.device                   AS runner_up_device,
       r.mode                     AS runner_up_mode,
       r.precision                AS runner_up_precision,
       r.score                    AS runner_up_value,
       CASE WHEN r.score IS NULL OR r.score = 0 OR b.score = 0 THEN NULL
            WHEN objective = 'throughput' THEN b.score / r.score - 1
            ELSE r.score / b.score - 1 END AS margin,
       b.result_id                AS best_result_id,
       -- added for reports (issue 13); the columns above keep their names and order
       r.result_id                AS runner_up_result_id,
       b.n                        AS best_n,
       b.repeats                  AS best_repeats,
       b.ci_method                AS best_ci_method,
       b.median_ci_low            AS best_median_ci_low_s,
       b.median_ci_high           AS best_median_ci_high_s,
       b.p90                      AS best_p90_s,
       b.p99                      AS best_p99_s,
       b.peak_memory_bytes        AS best_peak_memory_bytes,
       b.energy_per_item_j        AS best_energy_per_item_j,
       r.median                   AS runner_up_median_s,
       r.p90                      AS runner_up_p90_s,
       r.p99                      AS runner_up_p99_s,
       r.n                        AS runner_up_n,
       r.repeats                  AS runner_up_repeats,
       r.peak_memory_bytes        AS runner_up_peak_memory_bytes,
       r.energy_per_item_j        AS runner_up_energy_per_item_j,
       m.margin_ci_low,
       m.margin_ci_high,
       CASE WHEN r.result_id IS NULL THEN NULL
            WHEN m.margin_ci_low IS NULL THEN 'unconfirmed'
            WHEN m.margin_ci_low > 0.05 THEN 'win'
            WHEN m.margin_ci_low <= 0 OR m.margin_ci_high < 0.05 THEN 'tie'
            ELSE 'unconfirmed' END AS margin_verdict,
       coalesce(b.p90 > 2 * b.median OR b.p99 > 5 * b.median, false) AS best_tail_unstable,
       coalesce(r.p90 > 2 * r.median OR r.p99 > 5 * r.median, false) AS runner_up_tail_unstable,
       CASE WHEN r.result_id IS NULL THEN NULL
            WHEN b.summary_only OR r.summary_only THEN 'published'
            WHEN b.noise IS NOT NULL AND r.noise IS NOT NULL THEN 'history'
            WHEN b.run_id = r.run_id AND b.ci_method = 'hierarchical_bootstrap'
                 AND r.ci_method = 'hierarchical_bootstrap' THEN 'processes'
       END                        AS margin_basis,
       CASE WHEN r.result_id IS NOT NULL THEN least(coalesce(b.repeats, 1), coalesce(r.repeats, 1)) END
                                  AS margin_processes,
       b.runs                     AS best_runs,
       r.runs                     AS runner_up_runs,
       -- systems (issue 47): the normalisation, each side's system, accelerators and power, and whether
       -- its figure is published (summary-only, no interval) rather than measured by benchdb
       coalesce(per, 'system')    AS per,
       b.system_name              AS best_system,
       b.devices                  AS best_accelerators,
       b.value                    AS best_headline,
       b.unit                     AS best_headline_unit,
       b.power_w                  AS best_power_w,
       b.price_per_hour           AS best_price_per_hour,
       b.summary_only             AS best_summary_only,
       b.measured_by              AS best_measured_by,
       r.system_name              AS runner_up_system,
       r.devices                  AS runner_up_accelerators,
       r.summary_only             AS runner_up_summary_only,
       r.measured_by              AS runner_up_measured_by
FROM ranked b
LEFT JOIN ranked r
       ON r.model_id = b.model_id AND r.batch_size = b.batch_size
      AND r.input_shape = b.input_shape AND r.value_unit = b.value_unit AND r.rank = 2
LEFT JOIN LATERAL (
    SELECT exp(ln(1 + margin_pt) - 1.96 * se) - 1 AS margin_ci_low,
           exp(ln(1 + margin_pt) + 1.96 * se) - 1 AS margin_ci_high
    FROM (SELECT CASE WHEN r.score IS NULL OR r.score = 0 OR b.score = 0 THEN NULL
                      WHEN objective = 'throughput' THEN b.score / r.score - 1
                      ELSE r.score / b.score - 1 END AS margin_pt,
                 sqrt(pow(ln(b.median_ci_high / b.median_ci_low) / 3.92, 2)
                      + pow(ln(r.median_ci_high / r.median_ci_low) / 3.92, 2)
                      + CASE WHEN b.noise IS NOT NULL AND r.noise IS NOT NULL
                             THEN pow(b.noise, 2) + pow(r.noise, 2) ELSE 0 END) AS se
          WHERE b.median_ci_low > 0 AND b.median_ci_high >= b.median_ci_low
            AND r.median_ci_low > 0 AND r.median_ci_high >= r.median_ci_low
            AND ((b.noise IS NOT NULL AND r.noise IS NOT NULL)
                 OR (b.run_id = r.run_id AND b.ci_method = 'hierarchical_bootstrap'
                     AND r.ci_method = 'hierarchical_bootstrap')))
    WHERE margin_pt > -1
) m ON true
WHERE b.rank = 1;

CREATE OR REPLACE MACRO bdb_optimal_under(objective, max_latency_s, max_memory_bytes, prices, models, hardware,
                                          max_accuracy_drop) AS TABLE
SELECT * FROM bdb_optimal_per(objective, 'system', max_latency_s, max_memory_bytes, prices,
                              MAP {}::MAP(VARCHAR, DOUBLE), models, hardware, max_accuracy_drop);

CREATE OR REPLACE MACRO bdb_optimal(objective, max_latency_s, max_memory_bytes, prices, models, hardware) AS TABLE
SELECT * FROM bdb_optimal_under(objective, max_latency_s, max_memory_bytes, prices, models, hardware, NULL);

-- optimal_hardware: the unconstrained answer, by throughput and by latency.
CREATE OR REPLACE VIEW optimal_hardware AS
SELECT * FROM bdb_optimal('throughput', NULL, NULL, MAP {}::MAP(VARCHAR, DOUBLE), NULL::VARCHAR[], NULL::VARCHAR[])
UNION ALL
SELECT * FROM bdb_optimal('latency', NULL, NULL, MAP {}::MAP(VARCHAR, DOUBLE), NULL::VARCHAR[], NULL::VARCHAR[]);
