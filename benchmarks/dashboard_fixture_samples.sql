-- The raw samples of report_fixture.sql's results for benchmarks/dashboard.py: as
-- report_fixture_samples.sql, but each value and time offset its own (within 5 % of 1 ms; 1.1 ms
-- apart), as measured samples are: a constant compresses to nothing, and the static site's size is
-- judged on samples like a runner's.
SELECT 'r' || (1 + i // $samples_per_result) AS result_id, 'latency_s' AS metric, 's' AS unit,
       i % $samples_per_result AS iteration, (i % $samples_per_result) * 0.0011 AS t_offset_s,
       0.001 * (1 + 0.05 * (hash(i) % 10007) / 10007.0) AS value, 0 AS repeat
FROM range($models * $hardware * 25 * $samples_per_result) t(i)
