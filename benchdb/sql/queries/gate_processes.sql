-- Every process's samples of one metric, for the valid results of the given series among the
-- given results (a side of the gate), as flat columns: s is the series' position in $series, k
-- the result's in $results; a (series, result, repeat) is one process. A side that holds several
-- runs of a series (separate invocations, --ab trials) pools them: each is a process.
SELECT list_position($series, r.series_id) AS s, list_position($results, x.result_id) AS k, x.repeat,
       x.iteration, x.value
FROM samples x
JOIN results r ON r.result_id = x.result_id
WHERE x.result_id IN (SELECT unnest($results)) AND r.series_id IN (SELECT unnest($series))
  AND x.metric = $metric AND r.status = 'ok' AND r.validity = 'valid'
