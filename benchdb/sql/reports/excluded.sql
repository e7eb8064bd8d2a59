-- Report: what the sections leave out, and why. Among the latest timing attempt of every series
-- (results_current) under the filters, those that are not a valid, successful timing: one row per
-- reason (the status when it did not run, else the first word of each validity reason, e.g. noisy,
-- busy_machine, too_few_samples), with how many results it applies to.
WITH c AS (
    SELECT result_id, status, validity, validity_reasons
    FROM results_current
    WHERE ($models IS NULL OR list_contains($models, model_id))
      AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
      AND NOT (status = 'ok' AND validity = 'valid' AND unit = 's')
),
raw AS (
    SELECT result_id, status = 'ok' AS measured,
           unnest(CASE WHEN status <> 'ok' THEN [status]
                       WHEN len(coalesce(validity_reasons, []::VARCHAR[])) = 0 THEN ['invalid']
                       ELSE validity_reasons END) AS text
    FROM c
),
reasons AS (
    SELECT result_id, measured, split_part(trim(text), ':', 1) AS reason FROM raw
)
SELECT reason, count(DISTINCT result_id) AS results, bool_or(measured) AS measured
FROM reasons
GROUP BY reason
ORDER BY results DESC, reason
