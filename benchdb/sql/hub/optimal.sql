-- The optimal-hardware table of the dataset card: by throughput, over the published models and
-- hardware ($models, $hardware: lists or NULL for all).
SELECT model_id, batch_size, input_shape, candidates, best_hardware, best_backend, best_mode,
       best_precision, best_median_s, best_throughput, runner_up_hardware, runner_up_backend, margin
FROM bdb_optimal('throughput', NULL, NULL, MAP {}::MAP(VARCHAR, DOUBLE), $models::VARCHAR[], $hardware::VARCHAR[])
ORDER BY model_id, batch_size, input_shape;
