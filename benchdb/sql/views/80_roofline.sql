-- hardware_peaks: the measured peaks of each hardware (benchdb calibrate), per thread count (NULL
-- on accelerators), kind (matmul: flop/s; copy, triad: bytes/s) and precision: from the latest
-- calibration of that key, the best figure any library reached, with its 95 % CI and backend.
-- Earlier calibrations stay in hardware_calibration as history.
CREATE OR REPLACE VIEW hardware_peaks AS
SELECT hardware_id, threads, kind, precision,
       max(value)                       AS value,
       arg_max(ci_low, value)           AS ci_low,
       arg_max(ci_high, value)          AS ci_high,
       any_value(unit)                  AS unit,
       arg_max(backend, value)          AS backend,
       max(calibrated_at)               AS calibrated_at,
       arg_max(calibration_id, value)   AS calibration_id
FROM (
    SELECT * FROM hardware_calibration
    QUALIFY calibrated_at = max(calibrated_at) OVER (PARTITION BY hardware_id, threads, kind, precision)
)
GROUP BY hardware_id, threads, kind, precision;

-- roofline: each latest valid timing result (results_latest) against its hardware's measured peaks.
--   flops             FLOPs of one forward (one call at the batch size), flops_method says where from:
--                     'runner' (its own torch.utils.flop_counter count), 'runner: same model, batch
--                     and shape' (another backend's count of the same computation), 'model' (the
--                     model's FLOPs per item x batch, e.g. 2 N^3 for matmul:N), or 'estimate: 2 x
--                     parameters x tokens' (tokens = seq_len, else 1: a lower bound)
--   bytes             parameters x bytes per element of the precision, plus activations where known
--                     (matmul:N: the B x N x N input and output); bytes_method says which
--   peak_flops        matmul peak of the hardware at the result's precision, from the calibration
--                     with the same thread count, else the nearest one (peak_threads)
--   peak_bandwidth    triad bandwidth (bytes/s), same choice of calibration
--   arithmetic_intensity = flops / bytes; achieved_flops = flops / median latency;
--   pct_of_peak = achieved_flops / peak_flops; roofline_s = max(flops / peak_flops,
--   bytes / peak_bandwidth), the roofline's lower bound on the latency; bound: which term is larger
--   energy_per_item_j from measured power (results_latest); energy_method: 'rapl' (CPU package +
--   DRAM counters) or 'nvml' (NVIDIA); NULL when not measured. Estimates never appear here.
-- hardware_config names the "hardware" the predictor works with: the device at its thread count.
CREATE OR REPLACE VIEW roofline AS
WITH rapl AS (
    SELECT DISTINCT result_id FROM result_metrics WHERE metric = 'rapl_zones'
), counted AS (
    SELECT model_id, batch_size, input_shape, median(flops_per_forward) AS flops
    FROM results_latest WHERE flops_per_forward IS NOT NULL
    GROUP BY ALL
), base AS (
    SELECT r.result_id, r.series_id, r.run_id, r.model_id, a.family, a.model_type, a.num_parameters,
           r.hardware_id, r.hardware_name, r.hardware_kind, r.threads,
           CASE WHEN r.hardware_kind = 'cpu' AND r.threads IS NOT NULL
                THEN r.hardware_name || ' x' || r.threads || ' threads' ELSE r.hardware_name END AS hardware_config,
           r.backend, r.device, r.mode, r.precision, r.batch_size, r.input_shape, r.options_id,
           r.median AS latency_s, r.median_ci_low AS latency_ci_low, r.median_ci_high AS latency_ci_high,
           r.throughput, r.energy_per_item_j,
           CASE WHEN r.energy_per_item_j IS NULL THEN NULL
                WHEN x.result_id IS NOT NULL THEN 'rapl' WHEN r.hardware_kind IN ('cuda', 'rocm') THEN 'nvml' END
                                                                        AS energy_method,
           CASE r.precision WHEN 'fp64' THEN 8 WHEN 'fp32' THEN 4 WHEN 'fp16' THEN 2 WHEN 'bf16' THEN 2
                            WHEN 'int8' THEN 1 END                      AS bytes_per_element,
           coalesce(TRY_CAST(nullif(regexp_extract(r.input_shape, 'seq_len=(\d+)', 1), '') AS BIGINT), 1) AS tokens,
           TRY_CAST(nullif(regexp_extract(r.input_shape, '^n=(\d+)$', 1), '') AS BIGINT) AS matmul_n,
           r.flops_per_forward, c.flops AS counted_flops, a.flops_per_item
    FROM results_latest r
    JOIN architectures a ON a.arch_id = r.arch_id
    LEFT JOIN counted c ON c.model_id = r.model_id AND c.batch_size = r.batch_size AND c.input_shape = r.input_shape
    LEFT JOIN rapl x ON x.result_id = r.result_id
), sized AS (
    SELECT *,
           CAST(coalesce(flops_per_forward, counted_flops, flops_per_item * batch_size,
                         2 * num_parameters * batch_size * tokens) AS DOUBLE) AS flops,
           CASE WHEN flops_per_forward IS NOT NULL THEN 'runner'
                WHEN counted_flops IS NOT NULL THEN 'runner: same model, batch and shape'
                WHEN flops_per_item IS NOT NULL THEN 'model'
                WHEN num_parameters IS NOT NULL THEN 'estimate: 2 x parameters x tokens' END AS flops_method,
           CAST(num_parameters * bytes_per_element
                + coalesce(2 * batch_size * matmul_n * matmul_n * bytes_per_element, 0) AS DOUBLE) AS bytes,
           CASE WHEN num_parameters IS NULL OR bytes_per_element IS NULL THEN NULL
                WHEN matmul_n IS NOT NULL THEN 'parameters + input and output'
                ELSE 'parameters only' END                                AS bytes_method
    FROM base
), nearest AS (      -- per result and kind: the matmul peak at its precision and the triad bandwidth
                     -- (any precision), each at the nearest calibrated thread count, then the latest
    SELECT s.result_id, p.kind, p.value, p.threads
    FROM sized s
    JOIN hardware_peaks p ON p.hardware_id = s.hardware_id
                         AND (p.kind = 'triad' OR (p.kind = 'matmul' AND p.precision = s.precision))
    QUALIFY row_number() OVER (PARTITION BY s.result_id, p.kind
        ORDER BY abs(coalesce(p.threads, 0) - coalesce(s.threads, 0)), p.calibrated_at DESC, p.threads, p.value DESC) = 1
), peaks AS (
    SELECT s.*, m.value AS peak_flops, m.threads AS peak_threads, t.value AS peak_bandwidth
    FROM sized s
    LEFT JOIN nearest m ON m.result_id = s.result_id AND m.kind = 'matmul'
    LEFT JOIN nearest t ON t.result_id = s.result_id AND t.kind = 'triad'
)
SELECT result_id, series_id, run_id, model_id, family, model_type, num_parameters,
       hardware_id, hardware_name, hardware_kind, hardware_config, threads,
       backend, device, mode, precision, batch_size, input_shape, options_id,
       latency_s, latency_ci_low, latency_ci_high, throughput,
       flops, flops_method, bytes, bytes_method,
       flops / nullif(bytes, 0)                                   AS arithmetic_intensity,
       flops / latency_s                                          AS achieved_flops,
       peak_flops, peak_threads, peak_bandwidth,
       flops / latency_s / peak_flops                             AS pct_of_peak,
       greatest(flops / peak_flops, bytes / peak_bandwidth)       AS roofline_s,
       CASE WHEN flops / peak_flops >= coalesce(bytes / peak_bandwidth, 0) THEN 'compute'
            WHEN bytes / peak_bandwidth > flops / peak_flops THEN 'memory' END AS bound,
       energy_per_item_j, energy_method
FROM peaks;
