-- Per-metric statistics of the results not yet in the partitioned export (relation `exported`).
SELECT m.*
FROM result_metrics m
WHERE m.result_id IN (SELECT result_id FROM results)
  AND m.result_id NOT IN (SELECT result_id FROM exported)
