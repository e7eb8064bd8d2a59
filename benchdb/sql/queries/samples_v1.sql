-- Raw samples of contract v1 files (no repeat column: one process, repeat 0); as samples.sql.
SELECT scenario_id AS result_id, metric, unit, TRY_CAST(iteration AS INTEGER) AS iteration, t_offset_s, value,
       0 AS repeat
FROM read_parquet($files)
