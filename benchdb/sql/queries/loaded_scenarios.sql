SELECT r.result_id, f.path
FROM results r JOIN ingested_files f USING (file_id)
WHERE r.result_id IN (SELECT unnest($1))
