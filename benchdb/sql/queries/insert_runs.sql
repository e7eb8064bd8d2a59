INSERT OR IGNORE INTO runs BY NAME
SELECT run_id, bdb_utc(started_at) AS started_at, host, benchdb_version, git_commit,
       CAST(software AS JSON) AS software, CAST(config AS JSON) AS config, tags
FROM new_runs
