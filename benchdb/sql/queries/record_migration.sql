INSERT INTO schema_version (version, name, applied_at, benchdb_version)
VALUES ($1, $2, timezone('UTC', now()), $3)
