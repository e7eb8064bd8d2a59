-- Files seen before: loaded (or known copies of loaded files) and rejected ones, skipped without
-- hashing while the path, size and modification time are unchanged. A rejected file is judged
-- again only once it changes.
SELECT path, size_bytes, mtime_ns, status, error
FROM ingested_files
WHERE status IN ('ingested', 'duplicate', 'rejected')
QUALIFY row_number() OVER (PARTITION BY path, size_bytes, mtime_ns
                           ORDER BY status = 'rejected', ingested_at DESC) = 1
