-- The n-th most recent run (0 = latest).
SELECT run_id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT 1 OFFSET $n
