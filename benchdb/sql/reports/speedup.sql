-- Report: speedup of every latest valid result against the CPU PyTorch eager fp32 baseline.
SELECT *
FROM speedup
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, batch_size, input_shape, speedup DESC
