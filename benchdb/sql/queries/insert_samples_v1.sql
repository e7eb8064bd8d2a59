-- Raw samples of contract v1 files (no repeat column: one process, repeat 0).
INSERT INTO samples (result_id, metric, unit, iteration, t_offset_s, value, repeat)
SELECT scenario_id, metric, unit, iteration, t_offset_s, value, 0
FROM read_parquet($files)
