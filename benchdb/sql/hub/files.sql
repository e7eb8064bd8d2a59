-- Contract files to publish: every ingested file with its result's run and hardware.
--   $models, $hardware: lists to restrict to (hardware by name or id), NULL for all.
SELECT f.file_id, f.path, f.sha256, f.size_bytes, r.run_id, r.hardware_id, r.model_id
FROM ingested_files f
JOIN results r USING (file_id)
JOIN hardware h USING (hardware_id)
WHERE f.status = 'ingested'
  AND ($models::VARCHAR[] IS NULL OR list_contains($models::VARCHAR[], r.model_id))
  AND ($hardware::VARCHAR[] IS NULL OR list_contains($hardware::VARCHAR[], h.device_name)
       OR list_contains($hardware::VARCHAR[], r.hardware_id))
ORDER BY r.hardware_id, r.run_id, f.sha256;
