-- Record a file that was not loaded (status rejected or duplicate), replacing an older record
-- of the same path and status.
INSERT INTO ingested_files (file_id, path, size_bytes, mtime_ns, sha256, rows, status, error, ingested_at)
VALUES (nextval('ingested_files_seq'), $1, $2, $3, $4, NULL, $5, $6, timezone('UTC', now()))
