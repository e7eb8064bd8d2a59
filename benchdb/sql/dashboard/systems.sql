-- Dashboard: every system side by side for a model. kind 'headline': each system's latest headline
-- figure (system_results: measured by benchdb, or published summary-only) normalised per $per (a name
-- of bdb_normalisations(), system by default) and ranked by bdb_system_per, as report
-- --optimal-hardware --per ranks it: prices $price_names/$price_values by system or hardware name,
-- $accelerator_price_names/values by accelerator (USD per hour); normalised, normalised_unit, its
-- interval, missing (why a figure has none) and rank; the page draws what this computes.
-- kind 'serving': each serving load point's total token throughput (value) and per accelerator
-- against interactivity (tokens/s per user), measured (serving_points) or published
-- (serving_published_points: the source's throughput per GPU); on_front: on its system's Pareto front (bdb_beats)
-- of throughput per accelerator against interactivity (per model, in/out tokens, and measured or
-- published). A published figure has no interval (value_ci_low/high NULL).
-- What tells two headline rows of one system apart (the page labels each mark uniquely with them):
-- backend, mode, precision, batch_size, input_shape, submitter (a published result's submitting
-- organisation, from its options), nodes and heterogeneous (accelerators of more than one kind).
-- Headline rows come in the order of the report's ranking (system_ranking.sql: per input shape and
-- batch size, the ranked first, by rank, system and scenario).
WITH headline AS (
    SELECT 'headline' AS kind, model_id, mode AS scenario, input_shape,
           NULL::INTEGER AS in_tokens, NULL::INTEGER AS out_tokens,
           system_name, accelerator, accelerators, devices, summary_only, measured_by,
           value, unit, higher_is_better, value_ci_low, value_ci_high, power_w,
           value_per_accelerator, NULL::DOUBLE AS interactivity, result_id,
           backend, mode, precision, batch_size, options ->> 'submitter' AS submitter, nodes,
           coalesce(regexp_matches(accelerator, '\(x\d+\),'), false) AS heterogeneous,
           coalesce($per, 'system') AS per, price_per_hour, normalised, normalised_unit,
           normalised_ci_low, normalised_ci_high, missing, system_rank AS rank
    FROM bdb_system_per(coalesce($per, 'system'), MAP($price_names::VARCHAR[], $price_values::DOUBLE[]),
                        MAP($accelerator_price_names::VARCHAR[], $accelerator_price_values::DOUBLE[]),
                        NULL::VARCHAR[], NULL::VARCHAR[])
),
serving AS (
    SELECT 'serving' AS kind, p.model_id, p.endpoint AS scenario, p.input_shape, p.in_tokens, p.out_tokens,
           p.hardware_name AS system_name, h.device_name AS accelerator, r.accelerators, p.devices,
           false AS summary_only, p.measured_by,
           p.total_throughput AS value, 'tokens/s' AS unit, true AS higher_is_better,
           NULL::DOUBLE AS value_ci_low, NULL::DOUBLE AS value_ci_high, NULL::DOUBLE AS power_w,
           p.total_throughput_per_device AS value_per_accelerator,
           p.interactivity, p.result_id
    FROM serving_points p
    JOIN results r USING (result_id)
    JOIN hardware h ON h.hardware_id = r.hardware_id
    WHERE p.total_throughput_per_device IS NOT NULL AND p.interactivity IS NOT NULL
      AND p.result_id NOT IN (SELECT result_id FROM result_sources WHERE summary_only)
    UNION ALL
    SELECT 'serving', model_id, endpoint, input_shape, in_tokens, out_tokens,
           hardware_name, accelerator, accelerators, accelerators,
           true, measured_by,
           total_throughput_per_gpu * accelerators, 'tokens/s', true,
           NULL, NULL, NULL,
           total_throughput_per_gpu,
           interactivity, result_id
    FROM serving_published_points
    WHERE total_throughput_per_gpu IS NOT NULL AND interactivity IS NOT NULL
),
fronts AS (
    SELECT a.*,
           NOT EXISTS (SELECT 1 FROM serving b
                       WHERE b.model_id = a.model_id AND b.system_name = a.system_name
                         AND b.summary_only = a.summary_only
                         AND b.in_tokens IS NOT DISTINCT FROM a.in_tokens
                         AND b.out_tokens IS NOT DISTINCT FROM a.out_tokens
                         AND bdb_beats(b.value_per_accelerator, b.interactivity,
                                       a.value_per_accelerator, a.interactivity)) AS on_front
    FROM serving a
)
SELECT * FROM (
    SELECT *, NULL::BOOLEAN AS on_front FROM headline
    UNION ALL BY NAME
    SELECT * FROM fronts
)
WHERE ($model IS NULL OR model_id = $model)
  AND ($scenario IS NULL OR scenario = $scenario)
  AND ($in IS NULL OR in_tokens = TRY_CAST($in AS INTEGER))
  AND ($out IS NULL OR out_tokens = TRY_CAST($out AS INTEGER))
ORDER BY model_id, kind, input_shape, batch_size, normalised IS NULL, rank, system_name, scenario, interactivity,
         result_id
