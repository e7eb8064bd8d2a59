-- Dashboard: the runs, newest first, by what they are: where they come from (source: an import's
-- format, else benchdb and its version), who submitted them (an imported result's submitter, else the
-- host that measured them), on which systems, and when (started, as people read it, in UTC); what they
-- measured (results, and how many ran ok and valid, were invalid or failed); and the run before each
-- (previous_run_id: the link to compare the two). The ids stay for the links; latest_results (those
-- the results view lists) and only_model (a published run's one model: its link goes to the systems
-- page, as the results view lists measured results only) choose where a run's results link to.
WITH r AS (
    SELECT ru.run_id, ru.started_at,
           any_value(coalesce('import: ' || (ru.config ->> 'imported_from'),
                              'benchdb ' || coalesce(ru.benchdb_version, '?')))   AS source,
           coalesce(string_agg(DISTINCT r.options ->> 'submitter', ', ' ORDER BY r.options ->> 'submitter'),
                    CASE WHEN any_value(ru.host) <> 'unknown' THEN any_value(ru.host) END) AS submitter,
           string_agg(DISTINCT coalesce(h.system_name, h.device_name), ', '
                      ORDER BY coalesce(h.system_name, h.device_name))       AS systems,
           count(r.result_id)                                                  AS results,
           count(l.result_id)                                                  AS latest_results,
           -- a run of published figures only (no samples) and of one model: its figures are on the systems page
           CASE WHEN count(DISTINCT r.model_id) = 1 AND bool_and(coalesce(src.summary_only, false))
                THEN any_value(r.model_id) END                                 AS only_model,
           count(*) FILTER (WHERE r.status = 'ok' AND r.validity = 'valid')    AS valid_results,
           count(*) FILTER (WHERE r.status = 'ok' AND r.validity <> 'valid')   AS invalid,
           count(*) FILTER (WHERE r.status <> 'ok')                            AS failed,
           ru.git_commit
    FROM runs ru
    LEFT JOIN results r USING (run_id)
    LEFT JOIN results_latest l ON l.result_id = r.result_id
    LEFT JOIN result_sources src ON src.result_id = r.result_id
    LEFT JOIN hardware h ON h.hardware_id = r.hardware_id
    GROUP BY ru.run_id, ru.started_at, ru.git_commit
)
SELECT strftime(started_at, '%Y-%m-%d %H:%M UTC') AS started, source, submitter, systems, results, valid_results,
       invalid, failed, git_commit, run_id, latest_results, only_model,
       lead(run_id) OVER (ORDER BY started_at DESC, run_id DESC) AS previous_run_id
FROM r
ORDER BY r.started_at DESC, run_id DESC
