-- Report: the latest valid timing results that --max-accuracy-drop leaves out of the optimal table
-- (under the same filters), with why: their agreement with fp32 (result_accuracy) and its drop, or
-- no agreement recorded (accuracy unknown). fp32 results are the reference and never left out.
SELECT r.model_id, r.batch_size, r.input_shape, r.hardware_name, r.backend, r.mode, r.precision,
       json_extract_string(r.options, '$.quantization') AS quantization,
       a.agreement_metric, a.agreement, a.score_drop, a.score_basis, a.sts_drop, a.accuracy_drop, a.accuracy_basis,
       r.result_id
FROM results_latest r
LEFT JOIN result_accuracy a USING (result_id)
WHERE NOT bdb_serving_point(r.mode)
  AND r.precision <> 'fp32'
  AND ($models IS NULL OR list_contains($models, r.model_id))
  AND ($hardware IS NULL OR list_contains($hardware, r.hardware_name) OR list_contains($hardware, r.hardware_id))
  AND (a.accuracy_drop IS NULL OR a.accuracy_drop > $max_accuracy_drop)
ORDER BY r.model_id, r.batch_size, r.input_shape, r.hardware_name, r.backend, r.mode, r.precision
