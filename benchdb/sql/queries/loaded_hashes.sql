SELECT sha256, path FROM ingested_files
WHERE status = 'ingested' AND sha256 IN (SELECT unnest($1))
