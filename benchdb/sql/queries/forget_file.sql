DELETE FROM ingested_files WHERE path = $1 AND status IN ('rejected', 'duplicate')
