-- Report: the environment of every hardware x software combination behind the timing results under
-- the filters: the hardware record, the run's library versions (runs.software)
-- and benchdb version, the threads, drivers, hosts and commits seen, and how many results and runs.
WITH c AS (      -- every timing result under the filters (no per-series window: this runs on every report)
    SELECT r.result_id, r.run_id, r.hardware_id, r.threads, r.driver
    FROM results r
    JOIN hardware h USING (hardware_id)
    WHERE bdb_timing_metric(r.metric)
      AND ($models IS NULL OR list_contains($models, r.model_id))
      AND ($hardware IS NULL OR list_contains($hardware, h.device_name) OR list_contains($hardware, r.hardware_id))
)
SELECT h.hardware_id, h.device_name AS hardware_name, h.kind, h.vendor, h.cpu_model, h.cores_physical,
       h.cores_logical, h.memory_bytes, h.compute_capability, h.arch, h.os,
       CAST(ru.software AS VARCHAR)                                    AS software_json,
       list(DISTINCT ru.benchdb_version ORDER BY ru.benchdb_version)
           FILTER (WHERE ru.benchdb_version IS NOT NULL)               AS benchdb_versions,
       list(DISTINCT c.threads ORDER BY c.threads) FILTER (WHERE c.threads IS NOT NULL) AS threads,
       list(DISTINCT c.driver ORDER BY c.driver) FILTER (WHERE c.driver IS NOT NULL)    AS drivers,
       list(DISTINCT ru.host ORDER BY ru.host) FILTER (WHERE ru.host IS NOT NULL)       AS hosts,
       list(DISTINCT ru.git_commit ORDER BY ru.git_commit) FILTER (WHERE ru.git_commit IS NOT NULL) AS commits,
       count(DISTINCT c.run_id)                                        AS runs,
       count(*)                                                        AS results
FROM c
JOIN runs ru USING (run_id)
JOIN hardware h ON h.hardware_id = c.hardware_id
GROUP BY ALL
ORDER BY hardware_name, software_json
