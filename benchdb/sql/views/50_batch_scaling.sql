-- batch_scaling: latency and throughput against batch size per model x hardware x backend x mode
-- x precision x input shape x options (threads, ...), with the result_id, n, repeats, the latency's 95 %
-- interval (latency_ci_low_s/high_s) and tail (p90, p99). scaling_efficiency: throughput gained relative to perfect linear
-- scaling from the smallest batch measured (1.0 = linear).
CREATE OR REPLACE VIEW batch_scaling AS
SELECT model_id, hardware_name, hardware_id, backend, device, mode, precision, input_shape, options,
       batch_size,
       median                                                       AS latency_s,
       throughput,
       median / first_value(median) OVER w                          AS latency_vs_smallest_batch,
       throughput / (first_value(throughput) OVER w
                     * batch_size / first_value(batch_size) OVER w)  AS scaling_efficiency,
       peak_memory_bytes,
       -- added for reports (issue 13): traceability and the latency's 95 % interval and tail
       result_id, n, repeats, median_ci_low AS latency_ci_low_s, median_ci_high AS latency_ci_high_s,
       p90 AS latency_p90_s, p99 AS latency_p99_s
FROM results_latest
WHERE NOT bdb_serving_point(mode)
WINDOW w AS (PARTITION BY model_id, hardware_id, backend, device, mode, precision, input_shape, options_id
             ORDER BY batch_size);
