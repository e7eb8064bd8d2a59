-- Report: every system side by side (report --optimal-hardware --per): per model, input shape (an
-- MLPerf result's names its scenario) and batch size, each system's latest valid figure (system_results: measured or published)
-- normalised per $per: 'system' (as is), 'accelerator', 'watt' (over measured power) or 'cost' (over
-- the system's price per hour: $price_names/$price_values by system or hardware name, else
-- $accelerator_price_names/values by accelerator x the accelerators it ran on), ranked best first.
-- normalised_ci_low/high: a measured figure's interval normalised alike; a published figure has none.
-- missing: why a figure has no normalised value (and so no rank). precision, backend and options (an
-- import's submitter and system id) tell apart two systems that share a name.
WITH c AS (
    SELECT r.*,
           coalesce(map_extract_value(MAP($price_names::VARCHAR[], $price_values::DOUBLE[]), r.system_name),
                    map_extract_value(MAP($price_names::VARCHAR[], $price_values::DOUBLE[]), r.hardware_name),
                    map_extract_value(MAP($accelerator_price_names::VARCHAR[], $accelerator_price_values::DOUBLE[]),
                                      r.accelerator) * r.devices)                AS price_per_hour
    FROM system_results r
    WHERE ($models IS NULL OR list_contains($models, r.model_id))
      AND ($hardware IS NULL OR list_contains($hardware, r.hardware_name) OR list_contains($hardware, r.hardware_id)
           OR list_contains($hardware, r.system_name))
),
n AS (
    SELECT c.*,
           CASE $per WHEN 'system' THEN value
                     WHEN 'accelerator' THEN value_per_accelerator
                     WHEN 'watt' THEN value_per_watt
                     WHEN 'cost' THEN CASE WHEN higher_is_better THEN value / price_per_hour END END AS normalised,
           unit || CASE WHEN NOT higher_is_better THEN ''
                        ELSE CASE $per WHEN 'accelerator' THEN ' per accelerator' WHEN 'watt' THEN ' per W'
                                       WHEN 'cost' THEN ' per USD/h' ELSE '' END END          AS normalised_unit,
           CASE WHEN NOT higher_is_better AND $per IN ('watt', 'cost') THEN 'a latency: not divided'
                WHEN $per = 'accelerator' AND devices IS NULL THEN 'accelerators unknown'
                WHEN $per = 'watt' AND power_w IS NULL THEN 'no power measured'
                WHEN $per = 'cost' AND price_per_hour IS NULL THEN 'no price' END              AS missing
    FROM c
)
SELECT model_id, mode, input_shape, batch_size,
       CASE WHEN normalised IS NOT NULL THEN
            rank() OVER (PARTITION BY model_id, input_shape, batch_size, normalised_unit, normalised IS NULL
                         ORDER BY CASE WHEN higher_is_better THEN -normalised ELSE normalised END) END AS rank,
       system_name, accelerator, accelerators, devices, hardware_id, summary_only, measured_by, n, precision,
       backend, options,
       value, unit, higher_is_better, value_ci_low, value_ci_high, power_w, price_per_hour,
       normalised, normalised_unit,
       CASE WHEN value > 0 THEN value_ci_low * normalised / value END  AS normalised_ci_low,
       CASE WHEN value > 0 THEN value_ci_high * normalised / value END AS normalised_ci_high,
       missing, result_id
FROM n
ORDER BY model_id, input_shape, batch_size, normalised IS NULL, rank, system_name, mode, result_id
