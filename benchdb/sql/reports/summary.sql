-- Report header: what the warehouse holds. valid_results counts valid, successful timing results
-- (what the sections rank); verification_results counts results whose primary metric is not a
-- timing (--verify-only checks, in the verification view); published_results counts summary-only
-- imports (an MLPerf or InferenceX figure: no samples, never a timing benchdb measured).
-- latest_results: the latest timing attempt of each series (results_current), what the sections
-- and the busy-machine notice count; latest_valid: those that are valid, successful timings.
-- Each table is read once, its counts side by side: a scalar subquery per count made one cross
-- product per figure, and DuckDB's join-order search over them cost more than every count.
WITH published AS (
    SELECT result_id FROM result_sources WHERE summary_only
),
r AS (
    SELECT count(DISTINCT r.model_id)                                     AS models,
           count(*)                                                       AS results,
           count(*) FILTER (WHERE r.status = 'ok' AND r.validity = 'valid'
                              AND bdb_timing_metric(r.metric) AND r.unit = 's') AS valid_results,
           count(*) FILTER (WHERE NOT bdb_timing_metric(r.metric) AND p.result_id IS NULL)
                                                                          AS verification_results
    FROM results r
    LEFT JOIN published p ON p.result_id = r.result_id
),
ru AS (SELECT count(*) AS runs, max(started_at) AS latest_run FROM runs),
-- results_current once for both of its counts (each pass ranks every result)
latest AS (
    SELECT count(*)                                                       AS latest_results,
           count(*) FILTER (WHERE status = 'ok' AND validity = 'valid' AND unit = 's') AS latest_valid
    FROM results_current
)
SELECT ru.runs,
       (SELECT count(*) FROM hardware)                                    AS hardware,
       r.models, r.results, r.valid_results, r.verification_results,
       (SELECT count(*) FROM published)                                   AS published_results,
       (SELECT count(*) FROM samples)                                     AS samples,
       ru.latest_run,
       latest.latest_results,
       latest.latest_valid
FROM r, ru, latest
