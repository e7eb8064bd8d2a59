-- Files already loaded (or known copies of loaded files): skipped without hashing when the
-- path, size and modification time are unchanged.
SELECT path, size_bytes, mtime_ns FROM ingested_files WHERE status IN ('ingested', 'duplicate')
