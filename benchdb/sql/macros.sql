-- benchdb statistics macros. Stored in the warehouse, so analysts can use them too.
-- (Series identity is not a macro: it is computed once, in benchdb/schema/identity.py, and stored
-- as results.series_id. Group by that column, never by re-spelled key columns.)

-- A percentile q (0 < q < 1) is only reported when at least 1/min(q, 1-q) samples back it
-- (p99 needs 100 samples, p90 needs 10, p25/p75 need 4); otherwise it is NULL, not a guess.
CREATE OR REPLACE MACRO bdb_pct_min_n(q) AS CAST(ceil(1.0 / least(q, 1.0 - q) - 1e-9) AS BIGINT);

-- Quantile q of a sorted list with linear interpolation between closest ranks (the same
-- definition as quantile_cont), so one sort per group serves every percentile and the CI.
CREATE OR REPLACE MACRO bdb_list_quantile(s, q) AS
    s[CAST(floor(q * (len(s) - 1)) AS BIGINT) + 1]
    + (q * (len(s) - 1) - floor(q * (len(s) - 1)))
      * (s[least(CAST(floor(q * (len(s) - 1)) AS BIGINT) + 2, len(s))] - s[CAST(floor(q * (len(s) - 1)) AS BIGINT) + 1]);

-- The aggregates of one group of sample values that every statistic is derived from
-- (queries/metric_stats.sql): a struct, so that one GROUP BY can compute them beside other
-- aggregates (ingest computes its row checks in the same pass over a batch's files).
-- Use in a GROUP BY query: bdb_group_values(value) AS g, then g.n, g.sorted_values, ...
CREATE OR REPLACE MACRO bdb_group_values(v) AS
    {'n': count(*), 'mean': avg(v), 'min': min(v), 'max': max(v),
     -- non-finite values reject their file (batch_groups.sql); they are kept out of stddev_samp,
     -- which raises 'out of range' on them in duckdb 1.x instead of returning NaN
     'stddev': stddev_samp(CASE WHEN isfinite(v) THEN v END),
     'sorted_values': list_sort(list(v))};

-- 1-based ranks of the 95 % distribution-free confidence interval of the median
-- (binomial order statistics, normal approximation). Outside 1..n there are too few samples.
CREATE OR REPLACE MACRO bdb_median_ci_lo_rank(n) AS CAST(floor(n / 2.0 - 1.959964 * sqrt(n) / 2.0) AS BIGINT);
CREATE OR REPLACE MACRO bdb_median_ci_hi_rank(n) AS CAST(ceil(n / 2.0 + 1.0 + 1.959964 * sqrt(n) / 2.0) AS BIGINT);

-- Interval bounds from a sorted list of values.
CREATE OR REPLACE MACRO bdb_median_ci_low(sorted_values) AS
    CASE WHEN bdb_median_ci_lo_rank(len(sorted_values)) >= 1
          AND bdb_median_ci_hi_rank(len(sorted_values)) <= len(sorted_values)
         THEN sorted_values[bdb_median_ci_lo_rank(len(sorted_values))] END;
CREATE OR REPLACE MACRO bdb_median_ci_high(sorted_values) AS
    CASE WHEN bdb_median_ci_lo_rank(len(sorted_values)) >= 1
          AND bdb_median_ci_hi_rank(len(sorted_values)) <= len(sorted_values)
         THEN sorted_values[bdb_median_ci_hi_rank(len(sorted_values))] END;

-- An ISO-8601 timestamp text (with or without offset) as a UTC TIMESTAMP; every timestamp
-- column in the warehouse is UTC.
CREATE OR REPLACE MACRO bdb_utc(ts_text) AS timezone('UTC', CAST(ts_text AS TIMESTAMPTZ));

-- Is a primary metric a timing of the model (seconds per call)? Only results measured in one of
-- these can be a latency, a throughput, a point of a trend or a rating (with unit = 's'); a result
-- whose primary metric is anything else (max_rel_err of a --verify-only check, ...) is not a
-- timing, whatever its status: see the verification view.
CREATE OR REPLACE MACRO bdb_timing_metric(metric) AS
    coalesce(metric IN ('latency_s', 'ttft_s', 'tpot_s', 'generate_s'), false);

-- Is a result a serving load point (an endpoint measured under load: modes completions and chat)?
-- Its batch size is a concurrency and its latency a time to first token, so it has no per-call
-- throughput: the serving views rank it, the per-call ones (optimal_hardware, speedup,
-- batch_scaling) leave it out.
CREATE OR REPLACE MACRO bdb_serving_point(mode) AS coalesce(mode IN ('completions', 'chat'), false);

-- The standard error of log(baseline median / median) for a speedup's 95 % interval, where
-- run-to-run noise is known (basis 'processes': both in 2+ interleaved processes of one run, so the
-- medians' intervals hold it; 'history': both series' run-to-run noise added in quadrature); NULL
-- otherwise. lo/hi, b_lo/b_hi: the two medians' 95 % intervals.
CREATE OR REPLACE MACRO bdb_ratio_se(basis, lo, hi, b_lo, b_hi, noise, b_noise) AS
    CASE WHEN basis IS NOT NULL AND lo > 0 AND hi >= lo AND b_lo > 0 AND b_hi >= b_lo
         THEN sqrt(pow(ln(hi / lo) / 3.92, 2) + pow(ln(b_hi / b_lo) / 3.92, 2)
                   + CASE WHEN basis = 'history' THEN pow(noise, 2) + pow(b_noise, 2) ELSE 0 END)
    END;

-- Pareto dominance, the one definition every front uses (serving_frontier, serving_published_frontier,
-- the dashboard's systems view): point b beats point a when it is at least as high on both measures
-- (a throughput and an interactivity, both higher is better) and higher on one of them. A point is on
-- a front when no point of the same front beats it.
CREATE OR REPLACE MACRO bdb_beats(b_y, b_x, a_y, a_x) AS
    b_y >= a_y AND b_x >= a_x AND (b_y > a_y OR b_x > a_x);

-- The normalisations, the one list of them: the ways a figure is put beside other systems' (report
-- --optimal-hardware --per, the dashboard's systems page and its optimal answers). The command line's
-- --per choices, the reports' wording and the dashboard's menu are read from here, and what each one
-- divides a figure by is bdb_normalised, below. position: the order they are offered in (the first is
-- the default); name: the --per (?per=) value; label: how a heading says it; unit_suffix: what a
-- throughput's unit gains; priced: needs prices (USD per hour); missing: why a throughput has no value
-- this way; note: what a report says of it.
CREATE OR REPLACE MACRO bdb_normalisations() AS TABLE
SELECT * FROM (VALUES
    (1, 'system', 'per system', '', false, 'no figure',
     'Normalised per system: each figure as its whole system delivered it.'),
    (2, 'accelerator', 'per accelerator', ' per accelerator', false, 'accelerators unknown',
     'Normalised per accelerator: a throughput over the accelerators the result ran on (a CPU-only '
     || 'system counts as one); a latency is not divided.'),
    (3, 'watt', 'per watt', ' per W', false, 'no power measured',
     'Normalised per watt: a throughput over the measured power (power_w; MLPerf power runs: the '
     || 'system''s); results without measured power are not ranked.'),
    (4, 'cost', 'per dollar-hour', ' per USD/h', true, 'no price',
     'Normalised per dollar-hour: a throughput over the system''s price per hour (--prices: '
     || 'system_hour by system name, else accelerator_hour by accelerator x the accelerators it ran '
     || 'on); results without a price are listed as no price, not ranked.')
) AS n(position, name, label, unit_suffix, priced, missing, note);

-- A figure normalised one way (a name of bdb_normalisations()). A throughput (higher_is_better): as
-- is per system, over the accelerators it ran on (devices) per accelerator, over its measured power
-- per watt, over its price per hour (bdb_price_per_hour) per dollar-hour. A latency is not divided:
-- as is per system and per accelerator, none per watt or per dollar-hour.
CREATE OR REPLACE MACRO bdb_normalised(normalisation, value, higher_is_better, devices, power_w, price_per_hour) AS
    CASE normalisation
        WHEN 'system' THEN value
        WHEN 'accelerator' THEN CASE WHEN higher_is_better THEN value / devices ELSE value END
        WHEN 'watt' THEN CASE WHEN higher_is_better AND power_w > 0 THEN value / power_w END
        WHEN 'cost' THEN CASE WHEN higher_is_better THEN value / price_per_hour END
    END;

-- A system's price per hour: prices (MAP: system or hardware name -> USD per hour) by its system name,
-- else by its hardware name, else accelerator_prices (MAP: accelerator name -> USD per
-- accelerator-hour) times the accelerators it ran on (devices). The casts give the parameters a type
-- while the macro is bound: DuckDB before 1.4 refuses map functions on an untyped macro parameter.
CREATE OR REPLACE MACRO bdb_price_per_hour(prices, accelerator_prices, system_name, hardware_name, accelerator, devices) AS
    coalesce(map_extract_value(prices::MAP(VARCHAR, DOUBLE), system_name),
             map_extract_value(prices::MAP(VARCHAR, DOUBLE), hardware_name),
             map_extract_value(accelerator_prices::MAP(VARCHAR, DOUBLE), accelerator) * devices);
