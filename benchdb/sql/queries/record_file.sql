-- Record a file that was not loaded (status rejected or duplicate), replacing an older record
-- of the same path and status.
INSERT INTO ingested_files (file_id, path, size_bytes, mtime_ns, sha256, rows, status, error, ingested_at)
VALUES ((SELECT coalesce(max(file_id), 0) + 1 FROM ingested_files), $1, $2, $3, $4, NULL, $5, $6, timezone('UTC', now()))
