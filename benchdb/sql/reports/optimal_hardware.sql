-- Report: best hardware/backend per model, batch size and input shape under constraints, a
-- throughput normalised per $per (system, accelerator, watt, cost).
SELECT *
FROM bdb_optimal_per($objective, $per, $max_latency_s, $max_memory_bytes,
                     MAP($price_names::VARCHAR[], $price_values::DOUBLE[]),
                     MAP($accelerator_price_names::VARCHAR[], $accelerator_price_values::DOUBLE[]),
                     $models, $hardware, $max_accuracy_drop)
ORDER BY model_id, batch_size, input_shape
