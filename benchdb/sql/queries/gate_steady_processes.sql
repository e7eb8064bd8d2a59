-- Per given result ($results): its processes (repeats) with samples of $metric over the whole window,
-- and those with samples of $steady, which only a process that found a steady-state window has.
SELECT result_id,
       count(DISTINCT repeat) FILTER (WHERE metric = $metric) AS processes,
       count(DISTINCT repeat) FILTER (WHERE metric = $steady) AS steady
FROM samples
WHERE result_id IN (SELECT unnest($results)) AND metric IN ($metric, $steady)
GROUP BY result_id
