-- Results not yet in the partitioned export (relation `exported`: column result_id), with the month
-- of their run (run_month, 'YYYY-MM'): results are partitioned by hardware_id and run_month.
SELECT r.*, strftime(ru.started_at, '%Y-%m') AS run_month
FROM results r
JOIN runs ru USING (run_id)
WHERE r.result_id NOT IN (SELECT result_id FROM exported)
