-- Medians of one metric per valid result of the given series, oldest first, before a time.
SELECT r.series_id,
       list(m.median ORDER BY ru.started_at, r.result_id) AS medians
FROM results r
JOIN runs ru USING (run_id)
JOIN result_metrics m USING (result_id)
WHERE m.metric = $metric AND r.status = 'ok' AND r.validity = 'valid' AND ru.started_at < $before
  AND r.series_id IN (SELECT unnest($series))
GROUP BY 1
