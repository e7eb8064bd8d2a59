-- Raw samples of a batch of validated files, straight from Parquet (no staging copy): written as
-- one part of the samples folder (store/parts.py casts and sorts them).
SELECT scenario_id AS result_id, metric, unit, iteration, t_offset_s, value, repeat
FROM read_parquet($files)
