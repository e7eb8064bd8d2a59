-- Dashboard: the compatibility matrix (compat_matrix): per model family, which hardware and
-- backend ran it and how well (rating 3 best .. 1 slow, 0 broken or unrated), under the family
-- filter; the page pivots it and links each cell to the latest results it counts.
SELECT family, model_type, hardware_name, backend, rating, rating_label, relative_throughput,
       results, ok, failed, invalid, top_error
FROM compat_matrix
WHERE ($family IS NULL OR family = $family)
ORDER BY family, hardware_name, backend, model_type
