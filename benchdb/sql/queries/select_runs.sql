-- Runs picked by a selector: run id prefix, git commit prefix, tag, or a time range [t0, t1).
SELECT run_id
FROM runs
WHERE CASE $kind
          WHEN 'run' THEN starts_with(run_id, $value)
          WHEN 'commit' THEN starts_with(coalesce(git_commit, ''), $value)
          WHEN 'tag' THEN list_contains(coalesce(tags, []), $value)
          WHEN 'time' THEN started_at >= CAST($t0 AS TIMESTAMP) AND started_at < CAST($t1 AS TIMESTAMP)
      END
ORDER BY started_at
