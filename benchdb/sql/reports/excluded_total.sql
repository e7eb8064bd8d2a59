-- Report: how many latest timing attempts (results_current) under the filters are left out of the
-- sections (not a valid, successful timing), and how many of those ran (status ok, but invalid).
SELECT count(*)                              AS left_out,
       count(*) FILTER (WHERE status = 'ok') AS measured
FROM results_current
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
  AND NOT (status = 'ok' AND validity = 'valid' AND unit = 's')
