-- Change points already stored for these series, with their first run after the shift.
SELECT series_id, change_id, run_id, status
FROM change_points
WHERE series_id IN (SELECT unnest($series))
ORDER BY series_id, run_started_at, change_id
