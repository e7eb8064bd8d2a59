SELECT coalesce(max(file_id), 0) + 1 FROM ingested_files
