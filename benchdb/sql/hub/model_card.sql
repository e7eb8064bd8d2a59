-- The model-card table: for model $model, per hardware, batch size and input shape, the backend
-- with the lowest median latency among its latest valid results, with p50/p90, throughput, memory.
SELECT hardware_name, hardware_kind, hardware_id, batch_size, input_shape, backend, device, mode, precision,
       median AS p50_s, p90 AS p90_s, throughput, peak_memory_bytes,
       count(*) OVER (PARTITION BY hardware_id, batch_size, input_shape) AS candidates
FROM results_latest
WHERE model_id = $model
QUALIFY row_number() OVER (PARTITION BY hardware_id, batch_size, input_shape
                           ORDER BY median, backend, mode, precision, result_id) = 1
ORDER BY hardware_kind = 'cpu' DESC, hardware_name, hardware_id, batch_size, input_shape;
