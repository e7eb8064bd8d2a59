-- Every valid point of the series touched by the given runs (all series when $runs is NULL).
SELECT t.series_id, t.model_id, t.backend, t.device, t.mode, t.precision, t.batch_size, t.input_shape,
       t.options_id, t.hardware_id, t.run_id, t.run_started_at, t.git_commit, t.median
FROM trends t
WHERE $runs IS NULL
   OR t.series_id IN (SELECT series_id FROM trends WHERE list_contains($runs, run_id))
ORDER BY t.series_id, t.run_started_at, t.result_id
