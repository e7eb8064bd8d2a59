-- Open change points of these series that a new detection no longer finds.
DELETE FROM change_points
WHERE status = 'open' AND list_contains($series, series_id) AND NOT list_contains($keep, change_id)
