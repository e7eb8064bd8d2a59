-- Open (not acknowledged) change points of these series, over their whole history.
SELECT count(*) FROM change_points
WHERE status = 'open' AND series_id IN (SELECT unnest($series))
