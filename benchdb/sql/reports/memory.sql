-- Report: peak memory of the latest valid results (device memory when measured, else host RSS).
SELECT model_id, batch_size, input_shape, hardware_name, backend, mode, precision, peak_memory_bytes, result_id
FROM results_latest
WHERE peak_memory_bytes IS NOT NULL
  AND ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, batch_size, input_shape, peak_memory_bytes
