-- The model card's speedup line: for model $model, per batch size and input shape, the fastest
-- result that is not the baseline itself, against CPU PyTorch eager fp32 (the speedup view).
SELECT batch_size, input_shape, hardware_name, backend, device, mode, precision,
       median_s, baseline_hardware, baseline_median_s, speedup
FROM speedup
WHERE model_id = $model AND result_id <> baseline_result_id
QUALIFY row_number() OVER (PARTITION BY batch_size, input_shape ORDER BY speedup DESC, backend, hardware_name) = 1
ORDER BY batch_size, input_shape;
