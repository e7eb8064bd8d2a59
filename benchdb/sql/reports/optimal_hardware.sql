-- Report: best hardware/backend per model, batch size and input shape under constraints.
SELECT *
FROM bdb_optimal_under($objective, $max_latency_s, $max_memory_bytes,
                 MAP($price_names::VARCHAR[], $price_values::DOUBLE[]), $models, $hardware,
                 $max_accuracy_drop)
ORDER BY model_id, batch_size, input_shape
