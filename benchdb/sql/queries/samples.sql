-- Raw samples of a batch of files, straight from Parquet (no staging copy): written as parts of
-- the samples folder (store/parts.py casts them) before the batch's row checks read them back.
-- Follows samples_v1.sql or samples_v2.sql, which define file_rows for the batch's files.
--
-- A row's result is its file's: the scenario id of the file's metadata (batch_keys, one row per
-- file, from ingest.rows.key_row), never the id the row carries. Whether the row carries its
-- file's key is decided here from the row's own values: Parquet statistics are the writer's word
-- and are never consulted. A row whose key columns differ is written under
-- '!' || the columns that differ || '|' || its file's id, so the one pass of row checks
-- (batch_groups.sql) counts it for its file, whose rejection then rewrites the batch without it.
-- The columns are spelled twice on purpose: the one conjunction of equalities is all nearly every
-- row costs, and the list of the columns that differ is built only for a row that fails it.
-- An iteration past INTEGER is written as NULL (not a failed write): the row rule on iteration
-- then rejects its file in the same way.
SELECT CASE
           WHEN coalesce(r.run_id = k.run_id AND r.scenario_id = k.scenario_id AND r.model_id = k.model_id
                         AND r.backend = k.backend AND r.device = k.device AND r.mode = k.mode
                         AND r.precision = k.precision AND r.batch_size = k.batch_size
                         AND r.input_shape = k.input_shape, false)
               THEN k.scenario_id
           ELSE '!' || concat_ws(',',
                                 CASE WHEN r.run_id IS DISTINCT FROM k.run_id THEN 'run_id' END,
                                 CASE WHEN r.scenario_id IS DISTINCT FROM k.scenario_id THEN 'scenario_id' END,
                                 CASE WHEN r.model_id IS DISTINCT FROM k.model_id THEN 'model_id' END,
                                 CASE WHEN r.backend IS DISTINCT FROM k.backend THEN 'backend' END,
                                 CASE WHEN r.device IS DISTINCT FROM k.device THEN 'device' END,
                                 CASE WHEN r.mode IS DISTINCT FROM k.mode THEN 'mode' END,
                                 CASE WHEN r.precision IS DISTINCT FROM k.precision THEN 'precision' END,
                                 CASE WHEN r.batch_size IS DISTINCT FROM k.batch_size THEN 'batch_size' END,
                                 CASE WHEN r.input_shape IS DISTINCT FROM k.input_shape THEN 'input_shape' END)
                || '|' || k.scenario_id
       END                                     AS result_id,
       r.metric, r.unit, TRY_CAST(r.iteration AS INTEGER) AS iteration, r.t_offset_s, r.value, r.repeat
FROM file_rows r
JOIN batch_keys k ON k.filename = r.filename
