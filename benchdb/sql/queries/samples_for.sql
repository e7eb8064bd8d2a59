-- Raw samples of one metric for the given results ($ids), as flat columns the gate reads into
-- arrays (analysis/gate_samples.py): k is the result's position in $ids. No ORDER BY: parts keep each
-- result's rows together in measurement order, and the reader checks that order (sorting only a
-- result whose rows come back otherwise) instead of sorting millions of rows here.
SELECT list_position($ids, result_id) AS k, repeat, iteration, value
FROM samples
WHERE result_id IN (SELECT unnest($ids)) AND metric = $metric
