-- Report: when --optimal-hardware ranks nothing by its objective, what it could have ranked: the
-- candidates the same constraints and filters leave by throughput (which every timing result has),
-- how many of them have power samples, and their hardware names (to name what a price list lacks).
SELECT coalesce((SELECT sum(candidates)
                 FROM bdb_optimal_under('throughput', $max_latency_s, $max_memory_bytes,
                                  MAP {}::MAP(VARCHAR, DOUBLE), $models, $hardware,
                                  $max_accuracy_drop)), 0)  AS candidates,
       (SELECT count(power_w) FROM results_latest
         WHERE ($models IS NULL OR list_contains($models, model_id))
           AND ($hardware IS NULL OR list_contains($hardware, hardware_name)
                OR list_contains($hardware, hardware_id)))                            AS with_power,
       (SELECT list(DISTINCT hardware_name ORDER BY hardware_name) FROM results_latest
         WHERE ($models IS NULL OR list_contains($models, model_id))
           AND ($hardware IS NULL OR list_contains($hardware, hardware_name)
                OR list_contains($hardware, hardware_id)))                            AS hardware_names
