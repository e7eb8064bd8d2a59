-- (results, samples): how many of each the warehouse holds.
SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM samples)
