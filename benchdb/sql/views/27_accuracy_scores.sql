-- accuracy_scores: task scores measured elsewhere and imported (`benchdb import lm-eval`): per model,
-- precision, task and metric, the latest score with its standard error, the hardware and backend
-- it was measured with, and the result that holds it (mode 'accuracy': never a timing).
CREATE OR REPLACE VIEW accuracy_scores AS
SELECT r.model_id, r.precision, h.device_name AS hardware_name, r.backend,
       split_part(m.metric, '/', 1)                    AS task,
       split_part(m.metric, '/', 2)                    AS metric,
       m.median                                        AS value,
       e.median                                        AS stderr,
       json_extract_string(r.options, '$.source')      AS source,
       ru.started_at, r.run_id, r.result_id
FROM results r
JOIN result_metrics m USING (result_id)
LEFT JOIN result_metrics e ON e.result_id = m.result_id AND e.metric = m.metric || '_stderr'
JOIN hardware h USING (hardware_id)
JOIN runs ru USING (run_id)
WHERE r.mode = 'accuracy' AND r.status = 'ok' AND NOT contains(m.metric, '_stderr')
QUALIFY row_number() OVER (PARTITION BY r.model_id, r.precision, split_part(m.metric, '/', 1),
                                        split_part(m.metric, '/', 2)
                           ORDER BY ru.started_at DESC, r.result_id DESC) = 1;
