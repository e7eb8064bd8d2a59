-- The raw samples of report_fixture.sql's results: $samples_per_result per result, in the sample
-- columns of a part (benchdb/store/parts.py casts and sorts them as it writes the part).
SELECT 'r' || (1 + i // $samples_per_result) AS result_id, 'latency_s' AS metric, 's' AS unit,
       i % $samples_per_result AS iteration, 0.0 AS t_offset_s, 0.001 AS value, 0 AS repeat
FROM range($models * $hardware * 25 * $samples_per_result) t(i)
