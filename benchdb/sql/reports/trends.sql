-- Report: medians over runs for series with at least two valid results.
SELECT *
FROM trends
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
QUALIFY count(*) OVER (PARTITION BY series_id) >= 2
ORDER BY series_id, run_started_at
