-- Series with a valid result newer than a point in time (for --skip-fresh).
SELECT series_id
FROM results_latest
WHERE run_started_at >= CAST($since AS TIMESTAMP)
