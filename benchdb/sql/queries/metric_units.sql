-- The unit of one metric for each of the given results (from the statistics ingest computed).
SELECT result_id, unit FROM result_metrics WHERE result_id IN (SELECT unnest($ids)) AND metric = $metric
