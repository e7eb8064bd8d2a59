-- Scenario key check row by row, for files whose key columns carry no Parquet statistics.
-- $files: those files. Returns (filename, reason) for files whose rows differ from their metadata.
SELECT s.filename,
       'scenario key columns: ' || count(*) || ' row(s) differ from metadata.scenario' AS reason
FROM read_parquet($files, filename = true) s
JOIN batch_files f ON f.filename = s.filename
WHERE s.run_id IS DISTINCT FROM f.run_id
   OR s.scenario_id IS DISTINCT FROM f.scenario_id
   OR s.model_id IS DISTINCT FROM f.model_id
   OR s.backend IS DISTINCT FROM f.backend
   OR s.device IS DISTINCT FROM f.file_device
   OR s.mode IS DISTINCT FROM f.mode
   OR s.precision IS DISTINCT FROM f.file_precision
   OR s.batch_size IS DISTINCT FROM f.batch_size
   OR s.input_shape IS DISTINCT FROM f.file_input_shape
GROUP BY s.filename
ORDER BY s.filename
