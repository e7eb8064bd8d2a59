-- Report header: what the warehouse holds. valid_results counts valid, successful timing results
-- (what the sections rank); verification_results counts results whose primary metric is not a
-- timing (--verify-only checks, in the verification view); published_results counts summary-only
-- imports (an MLPerf or InferenceX figure: no samples, never a timing benchdb measured).
-- latest_results: the latest timing attempt of each series (results_current), what the sections
-- and the busy-machine notice count; latest_valid: those that are valid, successful timings.
SELECT (SELECT count(*) FROM runs)                                   AS runs,
       (SELECT count(*) FROM hardware)                               AS hardware,
       (SELECT count(DISTINCT model_id) FROM results)                AS models,
       (SELECT count(*) FROM results)                                AS results,
       (SELECT count(*) FROM results
         WHERE status = 'ok' AND validity = 'valid'
           AND bdb_timing_metric(metric) AND unit = 's')             AS valid_results,
       (SELECT count(*) FROM results
         WHERE NOT bdb_timing_metric(metric)
           AND result_id NOT IN (SELECT result_id FROM result_sources
                                  WHERE summary_only))              AS verification_results,
       (SELECT count(*) FROM result_sources WHERE summary_only)     AS published_results,
       (SELECT count(*) FROM samples)                                AS samples,
       (SELECT max(started_at) FROM runs)                            AS latest_run,
       latest.latest_results,
       latest.latest_valid
-- results_current once for both of its counts (each pass ranks every result)
FROM (SELECT count(*)                                                AS latest_results,
             count(*) FILTER (WHERE status = 'ok' AND validity = 'valid' AND unit = 's')
                                                                     AS latest_valid
      FROM results_current) latest
