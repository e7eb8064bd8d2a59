-- Report: when no series has two valid timing results, how many series have one.
SELECT count(DISTINCT series_id) AS series
FROM trends
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
