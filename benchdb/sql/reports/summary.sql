-- Report header: what the warehouse holds.
SELECT (SELECT count(*) FROM runs)                                   AS runs,
       (SELECT count(*) FROM hardware)                               AS hardware,
       (SELECT count(DISTINCT model_id) FROM results)                AS models,
       (SELECT count(*) FROM results)                                AS results,
       (SELECT count(*) FROM results WHERE status = 'ok' AND validity = 'valid') AS valid_results,
       (SELECT count(*) FROM samples)                                AS samples,
       (SELECT max(started_at) FROM runs)                            AS latest_run
