-- Badge figures: per model and hardware kind, the fastest latest valid result (median latency)
-- at the model's smallest measured batch size ($models, $hardware: lists or NULL for all).
WITH r AS (
    SELECT *
    FROM results_latest
    WHERE ($models::VARCHAR[] IS NULL OR list_contains($models::VARCHAR[], model_id))
      AND ($hardware::VARCHAR[] IS NULL OR list_contains($hardware::VARCHAR[], hardware_name)
           OR list_contains($hardware::VARCHAR[], hardware_id))
)
SELECT model_id, hardware_kind, backend, hardware_name, batch_size, input_shape, median
FROM r
WHERE batch_size = (SELECT min(batch_size) FROM r r2 WHERE r2.model_id = r.model_id)
QUALIFY row_number() OVER (PARTITION BY model_id, hardware_kind
                           ORDER BY median, backend, hardware_name, input_shape) = 1
ORDER BY model_id, hardware_kind = 'cpu' DESC, hardware_kind;
