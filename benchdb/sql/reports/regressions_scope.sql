-- Report: what --regressions searched: the series with valid timing results (trends) under the
-- filters, their runs, how many have the history a change point needs ($min_points valid runs),
-- and the acknowledged change points among them.
WITH t AS (
    SELECT series_id, run_id
    FROM trends
    WHERE ($models IS NULL OR list_contains($models, model_id))
      AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
),
s AS (
    SELECT series_id, count(*) AS points FROM t GROUP BY series_id
)
SELECT (SELECT count(*) FROM s)                                  AS series,
       (SELECT count(DISTINCT run_id) FROM t)                    AS runs,
       (SELECT count(*) FROM s WHERE points >= $min_points)      AS searchable,
       (SELECT count(*) FROM change_points c
         WHERE c.status = 'acked' AND c.series_id IN (SELECT series_id FROM s)) AS acked
