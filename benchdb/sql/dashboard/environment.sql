-- Dashboard: how two runs' environments differ: host, commit, benchdb version, every software
-- version either recorded, the hardware and the option sets their results ran with. Differences
-- first.
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
items AS (
    SELECT 'host' AS item, (SELECT host FROM b) AS base, (SELECT host FROM c) AS cand
    UNION ALL SELECT 'git_commit', (SELECT git_commit FROM b), (SELECT git_commit FROM c)
    UNION ALL SELECT 'benchdb_version', (SELECT benchdb_version FROM b), (SELECT benchdb_version FROM c)
    UNION ALL SELECT 'started_at', CAST((SELECT started_at FROM b) AS VARCHAR), CAST((SELECT started_at FROM c) AS VARCHAR)
    UNION ALL SELECT 'hardware', (SELECT names FROM hw WHERE run_id = $base), (SELECT names FROM hw WHERE run_id = $cand)
    UNION ALL SELECT 'options', (SELECT options FROM hw WHERE run_id = $base), (SELECT options FROM hw WHERE run_id = $cand)
    UNION ALL
    SELECT 'software: ' || k, (SELECT software ->> k FROM b), (SELECT software ->> k FROM c) FROM keys
)
SELECT item, base, cand, base IS DISTINCT FROM cand AS differs
FROM items
ORDER BY differs DESC, item
