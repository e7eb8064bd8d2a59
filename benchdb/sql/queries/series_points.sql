-- Points that change-point detection examines, for the series touched by the given runs (all
-- series when $runs is NULL). A series' points are its rows of the trends view (valid results),
-- oldest first. Each point carries its position in the whole series (idx, from 0), the series'
-- point count (n_points) and the position of its oldest point from $runs (first_new; 0 when
-- $runs is NULL). Only points from first_new - $context on are returned, so what is read per
-- series grows with what was ingested, not with the length of its history.
WITH new_points AS (
    SELECT DISTINCT series_id, run_id
    FROM trends
    WHERE $runs IS NULL OR run_id IN (SELECT unnest($runs))
),
points AS (
    SELECT t.series_id, t.model_id, t.backend, t.device, t.mode, t.precision, t.batch_size, t.input_shape,
           t.options_id, t.hardware_id, t.run_id, t.run_started_at, t.git_commit, t.median,
           row_number() OVER (PARTITION BY t.series_id ORDER BY t.run_started_at, t.result_id) - 1 AS idx,
           count(*) OVER (PARTITION BY t.series_id) AS n_points,
           n.run_id IS NOT NULL AS is_new
    FROM trends t
    LEFT JOIN new_points n USING (series_id, run_id)
    WHERE t.series_id IN (SELECT series_id FROM new_points)
),
first_new AS (
    SELECT series_id, min(idx) AS first_new FROM points WHERE is_new GROUP BY series_id
)
SELECT p.series_id, p.model_id, p.backend, p.device, p.mode, p.precision, p.batch_size, p.input_shape,
       p.options_id, p.hardware_id, p.run_id, p.run_started_at, p.git_commit, p.median, p.idx, p.n_points,
       f.first_new
FROM points p
JOIN first_new f USING (series_id)
WHERE p.idx >= f.first_new - $context
ORDER BY p.series_id, p.idx
