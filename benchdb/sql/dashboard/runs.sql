-- Dashboard: the latest runs, newest first, with what they measured (results, and how many ran
-- ok, were invalid or failed), where, and the run before each (previous_run_id: the link to
-- compare the two).
WITH r AS (
    SELECT ru.run_id, ru.started_at, ru.host, ru.git_commit, ru.benchdb_version,
           count(r.result_id)                                                  AS results,
           count(*) FILTER (WHERE r.status = 'ok' AND r.validity = 'valid')    AS valid,
           count(*) FILTER (WHERE r.status = 'ok' AND r.validity <> 'valid')   AS invalid,
           count(*) FILTER (WHERE r.status <> 'ok')                            AS failed,
           string_agg(DISTINCT h.device_name, ', ')                            AS hardware
    FROM runs ru
    LEFT JOIN results r USING (run_id)
    LEFT JOIN hardware h USING (hardware_id)
    GROUP BY ALL
)
SELECT *, lead(run_id) OVER (ORDER BY started_at DESC, run_id DESC) AS previous_run_id
FROM r
ORDER BY started_at DESC, run_id DESC
