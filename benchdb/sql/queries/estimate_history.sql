-- Seconds the latest result of each scenario key took to measure (samples x median latency).
SELECT model_id, backend, device, mode, precision, batch_size, input_shape, max(n * median) AS seconds
FROM results_latest
GROUP BY ALL
