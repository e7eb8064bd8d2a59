-- Raw samples of a batch of validated files, straight from Parquet (no staging copy).
INSERT INTO samples (result_id, metric, unit, iteration, t_offset_s, value, repeat)
SELECT scenario_id, metric, unit, iteration, t_offset_s, value, repeat
FROM read_parquet($files)
