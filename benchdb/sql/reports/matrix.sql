-- Report: compatibility matrix rows (pairs that were tried), restricted to hardware if given.
SELECT *
FROM compat_matrix
WHERE ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
  AND ($models IS NULL OR family IN (
        SELECT a.family FROM architectures a WHERE list_contains($models, a.model_id)))
ORDER BY family, model_type, hardware_name, backend
