-- The hardware model's data: every latest valid timing result with its FLOPs, bytes and its
-- hardware's measured peaks (the roofline view), one row per result.
SELECT result_id, model_id, family, num_parameters, hardware_id, hardware_name, hardware_config, threads,
       backend, device, mode, precision, batch_size, input_shape, options_id, latency_s,
       flops, flops_method, bytes, peak_flops, peak_bandwidth, roofline_s
FROM roofline
WHERE latency_s > 0
ORDER BY model_id, hardware_id, threads, backend, mode, precision, batch_size, input_shape;
