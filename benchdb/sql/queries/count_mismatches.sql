-- Results whose recorded sample counts disagree with the samples the warehouse holds (benchdb db
-- check): per result and metric, result_metrics.n against the rows of the samples view; per
-- result, results.n against its primary metric's count; and samples of no result at all.
-- Returns (result_id, metric, recorded, held), empty when every count agrees.
WITH held AS (
    SELECT result_id, metric, count(*) AS n FROM samples GROUP BY result_id, metric
),
per_metric AS (
    SELECT coalesce(m.result_id, h.result_id) AS result_id,
           coalesce(m.metric, h.metric)       AS metric,
           m.n                                AS recorded,
           coalesce(h.n, 0)                   AS held
    FROM result_metrics m
    FULL OUTER JOIN held h ON h.result_id = m.result_id AND h.metric = m.metric
    WHERE m.n IS DISTINCT FROM coalesce(h.n, 0)
),
per_result AS (
    SELECT r.result_id, r.metric, r.n AS recorded, coalesce(h.n, 0) AS held
    FROM results r
    LEFT JOIN held h ON h.result_id = r.result_id AND h.metric = r.metric
    WHERE r.n IS DISTINCT FROM coalesce(h.n, 0)
)
SELECT * FROM per_metric
UNION
SELECT * FROM per_result
ORDER BY result_id, metric
