-- Raw samples of a batch of files, straight from Parquet (no staging copy): written as parts of
-- the samples folder (store/parts.py casts them) before the batch's row checks read them back.
-- An iteration past INTEGER is written as NULL (not a failed write): the row rule on iteration
-- (batch_groups.sql) then rejects its file, and the batch is written again without it.
SELECT scenario_id AS result_id, metric, unit, TRY_CAST(iteration AS INTEGER) AS iteration, t_offset_s, value, repeat
FROM read_parquet($files)
