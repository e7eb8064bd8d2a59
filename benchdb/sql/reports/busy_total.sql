-- How many series have a latest timing attempt (results_current) under the filters.
SELECT count(*)
FROM results_current c
WHERE ($models IS NULL OR list_contains($models, c.model_id))
  AND ($hardware IS NULL OR list_contains($hardware, c.hardware_name) OR list_contains($hardware, c.hardware_id))
