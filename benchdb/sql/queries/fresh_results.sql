-- Scenario keys with a valid result newer than a point in time (for --skip-fresh).
SELECT model_id, backend, device, mode, precision, batch_size, input_shape, hardware_id
FROM results_latest
WHERE run_started_at >= CAST($since AS TIMESTAMP)
