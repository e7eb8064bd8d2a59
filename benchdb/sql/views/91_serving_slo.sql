-- bdb_serving_at_slo(max_ttft_p90_s, max_tpot_p50_s, min_interactivity, prices): per serving curve
-- (one configuration -- hardware x engine x precision x options, model, endpoint, in/out tokens -- and
-- one load kind and arrival process, its load points in order of load), the most output-token throughput per device it
-- reaches while TTFT p90 <= max_ttft_p90_s and TPOT p50 <= max_tpot_p50_s (a target interactivity
-- min_interactivity, tokens/s per user, is TPOT p50 <= 1 / min_interactivity). NULL: no limit.
-- Monotone, never extrapolated: a curve counts from its lowest load up to its first load point that
-- misses the SLO (or whose bounded metric is unknown: fail closed); later points never rescue it.
-- Between the last point that meets the SLO and that first miss, every figure is interpolated
-- linearly in load to where the first bound is reached. slo_status: 'interpolated' (that crossing),
-- 'measured' (a measured point gives the most), 'holds_at_max_load' (every point meets the SLO: the
-- answer is the highest load measured, not beyond), 'misses_at_min_load' (no answer).
-- throughput_low/high: the same answer with TPOT p50 at the high/low end of its 95 % CI (only when
-- a TPOT or interactivity bound is given; TTFT p90 has no interval). ttft_p50_ci_*: the bracketing
-- points' CI bounds interpolated the same way.
-- prices: MAP(hardware name or id -> USD per device-hour); usd_per_m_*_tokens charge the whole
-- device-hour to that kind of token (input and output separately, as price lists quote them).
-- rank: per model, endpoint and in/out tokens, by output-token throughput per device (1 = best).
CREATE OR REPLACE MACRO bdb_serving_at_slo(max_ttft_p90_s, max_tpot_p50_s, min_interactivity, prices) AS TABLE
WITH lim AS (
    SELECT CAST(max_ttft_p90_s AS DOUBLE) AS x,
           least(CAST(max_tpot_p50_s AS DOUBLE), 1.0 / CAST(min_interactivity AS DOUBLE)) AS y
),
pts AS (
    SELECT sp.*, v.variant, lim.x, lim.y,
           md5(concat_ws('|', sp.hardware_id, sp.engine, sp.precision, coalesce(sp.options_id, ''), sp.model_id,
                         sp.endpoint, coalesce(CAST(sp.in_tokens AS VARCHAR), ''),
                         coalesce(CAST(sp.out_tokens AS VARCHAR), ''), sp.load_kind, coalesce(sp.arrival, ''))) AS curve,
           CASE v.variant WHEN 'point' THEN sp.tpot_p50_s WHEN 'low' THEN sp.tpot_p50_ci_high_s
                          ELSE sp.tpot_p50_ci_low_s END AS tpot_v,
           coalesce((lim.x IS NULL OR sp.ttft_p90_s <= lim.x)
                    AND (lim.y IS NULL OR (CASE v.variant WHEN 'point' THEN sp.tpot_p50_s
                                                          WHEN 'low' THEN sp.tpot_p50_ci_high_s
                                                          ELSE sp.tpot_p50_ci_low_s END) <= lim.y), false) AS ok
    FROM serving_points sp
    CROSS JOIN lim
    CROSS JOIN (VALUES ('point'), ('low'), ('high')) v(variant)
    WHERE sp.load_kind IS NOT NULL AND sp.load_value IS NOT NULL AND sp.output_throughput_per_device IS NOT NULL
      AND (v.variant = 'point' OR lim.y IS NOT NULL)
),
ordered AS (
    SELECT *,
           row_number() OVER w AS idx,
           count(*) OVER (PARTITION BY curve, variant) AS points
    FROM pts
    WINDOW w AS (PARTITION BY curve, variant ORDER BY load_value, result_id)
),
marked AS (
    SELECT *, min(CASE WHEN NOT ok THEN idx END) OVER (PARTITION BY curve, variant) AS first_miss
    FROM ordered
),
cand AS (
    -- the measured points before the first miss
    SELECT m.*, CAST(NULL AS DOUBLE) AS t, m.result_id AS upper_result_id,
           CASE WHEN m.first_miss IS NULL AND m.idx = m.points THEN 'holds_at_max_load' ELSE 'measured' END AS slo_status
    FROM marked m
    WHERE m.idx < coalesce(m.first_miss, m.points + 1)
    UNION ALL
    -- the crossing between the last point that meets the SLO (a) and the first that misses it (b)
    SELECT a.* REPLACE (
               a.load_value + c.t * (b.load_value - a.load_value) AS load_value,
               a.output_throughput_per_device + c.t * (b.output_throughput_per_device
                                                       - a.output_throughput_per_device) AS output_throughput_per_device,
               a.output_throughput + c.t * (b.output_throughput - a.output_throughput) AS output_throughput,
               a.input_throughput + c.t * (b.input_throughput - a.input_throughput) AS input_throughput,
               a.request_throughput_per_device + c.t * (b.request_throughput_per_device
                                                        - a.request_throughput_per_device) AS request_throughput_per_device,
               a.ttft_p50_s + c.t * (b.ttft_p50_s - a.ttft_p50_s) AS ttft_p50_s,
               a.ttft_p50_ci_low_s + c.t * (b.ttft_p50_ci_low_s - a.ttft_p50_ci_low_s) AS ttft_p50_ci_low_s,
               a.ttft_p50_ci_high_s + c.t * (b.ttft_p50_ci_high_s - a.ttft_p50_ci_high_s) AS ttft_p50_ci_high_s,
               a.ttft_p90_s + c.t * (b.ttft_p90_s - a.ttft_p90_s) AS ttft_p90_s,
               a.tpot_p50_s + c.t * (b.tpot_p50_s - a.tpot_p50_s) AS tpot_p50_s),
           c.t, b.result_id AS upper_result_id, 'interpolated' AS slo_status
    FROM marked a
    JOIN marked b
      ON b.curve = a.curve AND b.variant = a.variant
     AND b.idx = b.first_miss AND a.idx = b.first_miss - 1
    CROSS JOIN LATERAL (
        SELECT least(CASE WHEN a.x IS NOT NULL AND b.ttft_p90_s > a.x
                          THEN (a.x - a.ttft_p90_s) / (b.ttft_p90_s - a.ttft_p90_s) END,
                     CASE WHEN a.y IS NOT NULL AND b.tpot_v > a.y
                          THEN (a.y - a.tpot_v) / (b.tpot_v - a.tpot_v) END) AS t
    ) c
    -- every bounded metric known at both ends, else the crossing cannot be placed (fail closed)
    WHERE c.t IS NOT NULL AND c.t >= 0 AND c.t <= 1
      AND (a.x IS NULL OR (a.ttft_p90_s IS NOT NULL AND b.ttft_p90_s IS NOT NULL))
      AND (a.y IS NULL OR (a.tpot_v IS NOT NULL AND b.tpot_v IS NOT NULL))
),
best AS (
    SELECT * FROM cand
    QUALIFY row_number() OVER (PARTITION BY curve, variant
                               ORDER BY output_throughput_per_device DESC, load_value) = 1
),
curves AS (
    SELECT curve, any_value(hardware_id) AS hardware_id, any_value(hardware_name) AS hardware_name,
           any_value(devices) AS devices, any_value(engine) AS engine,
           string_agg(DISTINCT engine_version, ', ' ORDER BY engine_version) AS engine_version,
           any_value(precision) AS precision, any_value(options) AS options, any_value(options_id) AS options_id,
           any_value(model_id) AS model_id, any_value(endpoint) AS endpoint, any_value(in_tokens) AS in_tokens,
           any_value(out_tokens) AS out_tokens, any_value(load_kind) AS load_kind, any_value(arrival) AS arrival,
           any_value(x) AS x, any_value(y) AS y
    FROM marked WHERE variant = 'point'
    GROUP BY curve
),
answer AS (
    SELECT c.*,
           coalesce(p.slo_status, 'misses_at_min_load') AS slo_status,
           p.load_value                    AS load_at_slo,
           p.output_throughput_per_device,
           lo.output_throughput_per_device AS output_throughput_per_device_low,
           hi.output_throughput_per_device AS output_throughput_per_device_high,
           p.output_throughput,
           p.input_throughput / c.devices  AS input_throughput_per_device,
           p.request_throughput_per_device,
           p.ttft_p50_s, p.ttft_p50_ci_low_s, p.ttft_p50_ci_high_s, p.ttft_p90_s, p.tpot_p50_s,
           CASE WHEN p.tpot_p50_s > 0 THEN 1.0 / p.tpot_p50_s END AS interactivity,
           p.result_id                     AS lower_result_id,
           p.upper_result_id,
           coalesce(map_extract_value(prices, c.hardware_name), map_extract_value(prices, c.hardware_id)) AS usd_per_hour
    FROM curves c
    LEFT JOIN best p ON p.variant = 'point' AND p.curve = c.curve
    LEFT JOIN best lo ON lo.variant = 'low' AND lo.curve = c.curve
    LEFT JOIN best hi ON hi.variant = 'high' AND hi.curve = c.curve
)
SELECT model_id, endpoint, in_tokens, out_tokens,
       CASE WHEN output_throughput_per_device IS NOT NULL THEN
           rank() OVER (PARTITION BY model_id, endpoint, in_tokens, out_tokens, output_throughput_per_device IS NULL
                        ORDER BY output_throughput_per_device DESC) END AS rank,
       hardware_name, hardware_id, devices, engine, engine_version, precision, options, options_id,
       load_kind, arrival, x AS max_ttft_p90_s, y AS max_tpot_p50_s, slo_status, load_at_slo,
       output_throughput_per_device, output_throughput_per_device_low, output_throughput_per_device_high,
       output_throughput, input_throughput_per_device, request_throughput_per_device,
       ttft_p50_s, ttft_p50_ci_low_s, ttft_p50_ci_high_s, ttft_p90_s, tpot_p50_s, interactivity,
       usd_per_hour,
       usd_per_hour / 3600.0 / input_throughput_per_device * 1e6  AS usd_per_m_input_tokens,
       usd_per_hour / 3600.0 / output_throughput_per_device * 1e6 AS usd_per_m_output_tokens,
       lower_result_id, upper_result_id
FROM answer;
