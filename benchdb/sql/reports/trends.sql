-- Report: medians over runs for series with at least two valid results, change points marked
-- (change_point: any; change_status: open or acked, with its note).
SELECT t.*, c.change_id IS NOT NULL AS change_point, c.status AS change_status, c.note AS change_note
FROM trends t
LEFT JOIN change_points c ON c.series_id = t.series_id AND c.run_id = t.run_id
WHERE ($models IS NULL OR list_contains($models, t.model_id))
  AND ($hardware IS NULL OR list_contains($hardware, t.hardware_name) OR list_contains($hardware, t.hardware_id))
QUALIFY count(*) OVER (PARTITION BY t.series_id) >= 2
ORDER BY t.series_id, t.run_started_at
