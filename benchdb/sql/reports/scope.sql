-- Report: what the model and hardware filters match, by kind, to say why a report is empty:
-- every result, valid successful timing results, verification checks (primary metric not a
-- timing), published summary-only figures (imports with no samples), timing results that ran but are invalid, and results that did not run (status not ok).
SELECT count(*)                                                                   AS results,
       count(*) FILTER (WHERE r.status = 'ok' AND r.validity = 'valid'
                          AND bdb_timing_metric(r.metric) AND r.unit = 's')       AS valid_timing,
       count(*) FILTER (WHERE NOT bdb_timing_metric(r.metric) AND NOT coalesce(s.summary_only, false))
                                                                                  AS verification,
       count(*) FILTER (WHERE coalesce(s.summary_only, false))                    AS published,
       count(*) FILTER (WHERE bdb_timing_metric(r.metric) AND r.status = 'ok'
                          AND NOT (r.validity = 'valid' AND r.unit = 's'))        AS invalid_timing,
       count(*) FILTER (WHERE bdb_timing_metric(r.metric) AND r.status <> 'ok')   AS not_ok
FROM results r
JOIN hardware h USING (hardware_id)
LEFT JOIN result_sources s USING (result_id)
WHERE ($models IS NULL OR list_contains($models, r.model_id))
  AND ($hardware IS NULL OR list_contains($hardware, h.device_name) OR list_contains($hardware, r.hardware_id))
