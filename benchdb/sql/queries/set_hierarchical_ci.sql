-- The hierarchical bootstrap CI of the median (registered as hierarchical_cis) replaces the
-- within-process order-statistic interval.
UPDATE results AS r
SET median_ci_low = c.lo, median_ci_high = c.hi, ci_method = 'hierarchical_bootstrap'
FROM hierarchical_cis AS c
WHERE r.result_id = c.result_id
