-- series_noise: per series with a valid timing, its valid runs so far and, once it has 8+ changes
-- between successive runs, its run-to-run noise: the scaled MAD of the successive log changes of
-- its medians (the regression gate's robust_noise). What an interval across separate runs needs
-- (bdb_optimal's margins, speedup); NULL noise: too few runs to know it.
CREATE OR REPLACE VIEW series_noise AS
WITH steps AS (
    SELECT r.series_id,
           ln(r.median) - ln(lag(r.median) OVER (PARTITION BY r.series_id ORDER BY ru.started_at, r.result_id)) AS d
    FROM results r
    JOIN runs ru USING (run_id)
    WHERE r.status = 'ok' AND r.validity = 'valid' AND bdb_timing_metric(r.metric) AND r.unit = 's'
      AND r.median > 0
),
step_centre AS (
    SELECT series_id, median(d) AS centre, count(d) AS changes FROM steps WHERE d IS NOT NULL GROUP BY series_id
)
SELECT s.series_id,
       c.changes + 1 AS runs,
       CASE WHEN c.changes >= 8 THEN median(abs(s.d - c.centre)) * 1.4826 / sqrt(2.0) END AS noise
FROM steps s
JOIN step_centre c USING (series_id)
WHERE s.d IS NOT NULL
GROUP BY s.series_id, c.changes;
