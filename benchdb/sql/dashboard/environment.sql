-- Dashboard: how two runs' environments differ: host, commit, benchdb version, every software
-- version either recorded, the hardware and the option sets their results ran with; how many results
-- each has and why those that do not count are out (compare's "nothing matches" says it from these),
-- and how many scenarios (series) the two share. Differences first.
WITH b AS (SELECT * FROM runs WHERE run_id = $base),
     c AS (SELECT * FROM runs WHERE run_id = $cand),
keys AS (
    SELECT DISTINCT unnest(json_keys(software)) AS k FROM runs WHERE run_id IN ($base, $cand)
),
hw AS (
    SELECT r.run_id, string_agg(DISTINCT h.device_name, ', ' ORDER BY h.device_name) AS names,
           string_agg(DISTINCT CAST(r.options AS VARCHAR), ' | ' ORDER BY CAST(r.options AS VARCHAR)) AS options
    FROM results r JOIN hardware h USING (hardware_id)
    WHERE r.run_id IN ($base, $cand)
    GROUP BY r.run_id
),
counted AS (
    SELECT run_id, count(*) AS n,
           count(*) FILTER (WHERE status = 'ok' AND validity = 'valid') AS good,
           count(*) FILTER (WHERE status = 'ok' AND validity <> 'valid') AS invalid
    FROM results WHERE run_id IN ($base, $cand) GROUP BY run_id
),
why AS (
    SELECT run_id, string_agg(reason || ' ×' || k, '; ' ORDER BY k DESC, reason) AS reasons
    FROM (SELECT run_id, reason, count(*) AS k
          FROM (SELECT run_id, CASE WHEN status <> 'ok' THEN status || coalesce(': ' || error, '')
                                    ELSE unnest(CASE WHEN len(coalesce(validity_reasons, [])) = 0
                                                     THEN [validity] ELSE validity_reasons END) END AS reason
                FROM results
                WHERE run_id IN ($base, $cand) AND NOT (status = 'ok' AND validity = 'valid'))
          GROUP BY run_id, reason)
    GROUP BY run_id
),
said AS (
    SELECT c.run_id,
           c.n || ' result' || CASE WHEN c.n = 1 THEN '' ELSE 's' END || ', ' || c.good || ' valid'
           || CASE WHEN c.invalid > 0 THEN ', ' || c.invalid || ' invalid' ELSE '' END
           || CASE WHEN c.n - c.good - c.invalid > 0 THEN ', ' || (c.n - c.good - c.invalid) || ' not ok' ELSE '' END
           || coalesce(' (' || w.reasons || ')', '') AS text
    FROM counted c LEFT JOIN why w USING (run_id)
),
-- timed: the scenarios compare.sql pairs (its WHERE, condition for condition), so 0 here says why it is empty
common AS (
    SELECT count(DISTINCT b.series_id) AS k,
           count(DISTINCT b.series_id) FILTER (WHERE b.status = 'ok' AND c.status = 'ok' AND b.validity = 'valid'
                                               AND c.validity = 'valid') AS valid,
           count(DISTINCT b.series_id) FILTER (WHERE b.status = 'ok' AND c.status = 'ok' AND b.validity = 'valid'
                                               AND c.validity = 'valid' AND bdb_timing_metric(b.metric)
                                               AND b.unit = 's' AND b.median > 0) AS timed
    FROM results b JOIN results c ON c.series_id = b.series_id
    WHERE b.run_id = $base AND c.run_id = $cand
),
items AS (
    SELECT 'host' AS item, (SELECT host FROM b) AS base, (SELECT host FROM c) AS cand
    UNION ALL SELECT 'git_commit', (SELECT git_commit FROM b), (SELECT git_commit FROM c)
    UNION ALL SELECT 'benchdb_version', (SELECT benchdb_version FROM b), (SELECT benchdb_version FROM c)
    UNION ALL SELECT 'started_at', CAST((SELECT started_at FROM b) AS VARCHAR), CAST((SELECT started_at FROM c) AS VARCHAR)
    UNION ALL SELECT 'hardware', (SELECT names FROM hw WHERE run_id = $base), (SELECT names FROM hw WHERE run_id = $cand)
    UNION ALL SELECT 'options', (SELECT options FROM hw WHERE run_id = $base), (SELECT options FROM hw WHERE run_id = $cand)
    UNION ALL SELECT 'results', coalesce((SELECT text FROM said WHERE run_id = $base), '0 results'),
                                coalesce((SELECT text FROM said WHERE run_id = $cand), '0 results')
    UNION ALL SELECT 'scenarios in common', CAST((SELECT k FROM common) AS VARCHAR), CAST((SELECT k FROM common) AS VARCHAR)
    UNION ALL SELECT 'valid in both', CAST((SELECT valid FROM common) AS VARCHAR), CAST((SELECT valid FROM common) AS VARCHAR)
    UNION ALL SELECT 'timed in both', CAST((SELECT timed FROM common) AS VARCHAR), CAST((SELECT timed FROM common) AS VARCHAR)
    UNION ALL
    SELECT 'software: ' || k, (SELECT software ->> k FROM b), (SELECT software ->> k FROM c) FROM keys
)
SELECT item, base, cand, base IS DISTINCT FROM cand AS differs
FROM items
ORDER BY differs DESC, item
