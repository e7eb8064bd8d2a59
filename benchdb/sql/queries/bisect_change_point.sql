-- `benchdb bisect CHANGE_ID`: the change point (by id or a unique prefix) with what reproduces its
-- scenario, the commit of its first run after the shift (bad) and of the series' last run before
-- it that recorded a commit (good).
SELECT c.change_id, c.series_id, c.model_id, c.backend, c.device, c.mode, c.precision, c.batch_size,
       c.input_shape, c.change, c.git_commit AS bad_commit, r.options, r.settings, r.threads,
       (SELECT ru.git_commit
        FROM results p JOIN runs ru ON ru.run_id = p.run_id
        WHERE p.series_id = c.series_id AND ru.started_at < c.run_started_at AND ru.git_commit IS NOT NULL
        ORDER BY ru.started_at DESC LIMIT 1) AS good_commit
FROM change_points c
JOIN results r ON r.series_id = c.series_id AND r.run_id = c.run_id
WHERE starts_with(c.change_id, $prefix)
ORDER BY c.change_id
