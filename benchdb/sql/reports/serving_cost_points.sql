-- Report: every point of every serving configuration, to read its throughput and cost at one
-- interactivity (--cost-at; benchdb/analysis/frontier.py reads each configuration's front): benchdb's
-- and imported per-request load points (serving_points) beside published summary-only ones
-- (serving_published_points), per configuration (hardware, engine, precision, options, model,
-- endpoint, in/out tokens). interactivity: tokens/s per user, 1 / TPOT p50 (a published point's own
-- figure where it gives one). Throughputs per GPU: a measured point's over the devices its server used.
-- accelerator_power_w: mean power per GPU (measured by benchdb's energy counter, or published);
-- provisioned_power_w: the system's provisioned power where its source's rules define one.
SELECT 'measured' AS source, hardware_name, NULL AS accelerator, engine, precision, coalesce(options_id, '') AS options_id,
       model_id, endpoint, in_tokens, out_tokens, result_id, concurrency, interactivity,
       total_throughput_per_device AS total_per_gpu, output_throughput_per_device AS output_per_gpu,
       input_throughput / devices AS input_per_gpu, devices AS gpus,
       device_power_w AS accelerator_power_w, NULL::DOUBLE AS provisioned_power_w
FROM serving_points
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
UNION ALL
SELECT 'published', hardware_name, accelerator, engine, precision, coalesce(options_id, ''),
       model_id, endpoint, in_tokens, out_tokens, result_id, concurrency,
       coalesce(interactivity, CASE WHEN tpot_p50_s > 0 THEN 1.0 / tpot_p50_s END),
       total_throughput_per_gpu, output_throughput_per_gpu, input_throughput_per_gpu, accelerators,
       accelerator_power_w, provisioned_power_w
FROM serving_published_points
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, endpoint, in_tokens, out_tokens, hardware_name, engine, precision, options_id, source, concurrency,
         result_id
