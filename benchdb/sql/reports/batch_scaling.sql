-- Report: latency and throughput against batch size.
SELECT *
FROM batch_scaling
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, hardware_name, backend, mode, precision, input_shape, batch_size
