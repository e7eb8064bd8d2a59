-- Seconds the latest result of each series took to measure (samples x median latency).
SELECT series_id, max(n * median) AS seconds
FROM results_latest
GROUP BY series_id
