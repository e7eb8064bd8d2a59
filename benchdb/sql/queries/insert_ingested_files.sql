INSERT INTO ingested_files (file_id, path, size_bytes, mtime_ns, sha256, rows, status, error, ingested_at)
SELECT file_id, filename, size_bytes, mtime_ns, sha256, num_rows, 'ingested', NULL, timezone('UTC', now())
FROM batch_files
