-- Raw samples of the results not yet in the partitioned export (relation `exported`), with the
-- partition columns of their result: hardware_id and run_month ('YYYY-MM' of the run).
SELECT s.*, r.hardware_id, strftime(ru.started_at, '%Y-%m') AS run_month
FROM samples s
JOIN results r USING (result_id)
JOIN runs ru USING (run_id)
WHERE r.result_id NOT IN (SELECT result_id FROM exported)
