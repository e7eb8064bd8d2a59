-- Results picked by one gate selector.
--   latest~n: for every (hardware, backend), the results of the (n+1)-th newest run that measured
--             that backend on that hardware (n = 0: the newest), so each hardware and backend is
--             compared with its own previous run, never with another machine's or backend's;
--   run / commit: run id or git commit prefix; tag: a run tag; time: runs started in [t0, t1).
WITH ranked AS (
    SELECT r.result_id, r.run_id, ru.started_at, ru.git_commit, ru.tags,
           dense_rank() OVER (PARTITION BY r.hardware_id, r.backend
                              ORDER BY ru.started_at DESC, r.run_id DESC) - 1 AS back
    FROM results r
    JOIN runs ru USING (run_id)
)
SELECT result_id
FROM ranked
WHERE CASE $kind
          WHEN 'latest' THEN back = $n
          WHEN 'run' THEN starts_with(run_id, $value)
          WHEN 'commit' THEN starts_with(coalesce(git_commit, ''), $value)
          WHEN 'tag' THEN list_contains(coalesce(tags, []), $value)
          WHEN 'time' THEN started_at >= CAST($t0 AS TIMESTAMP) AND started_at < CAST($t1 AS TIMESTAMP)
      END
ORDER BY started_at, result_id
