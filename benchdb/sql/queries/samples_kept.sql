-- A batch's rewrite after its checks rejected a file: the rows of the parts the batch wrote (as
-- samples.sql wrote them) that belong to the files it keeps. The source files are not read again,
-- so what is kept is exactly what was checked and counted, even if a file changed meanwhile.
-- $parts: the batch's parts; $ids: the result ids of the files it keeps.
SELECT result_id, metric, unit, iteration, t_offset_s, value, repeat
FROM read_parquet($parts)
WHERE list_contains($ids, result_id)
