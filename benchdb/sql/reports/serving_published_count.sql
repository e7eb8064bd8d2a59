-- Report: how many published (summary-only) serving points the filters keep, and on how many systems.
SELECT count(*) AS points, count(DISTINCT hardware_id) AS systems
FROM serving_published_points
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
