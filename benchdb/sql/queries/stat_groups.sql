-- Prefix that defines stat_groups (metric_stats.sql) over a relation stage_samples with columns
-- scenario_id, metric, unit, value: one group per (scenario_id, metric).
WITH stat_groups AS (
    SELECT scenario_id, metric, any_value(unit) AS unit, bdb_group_values(value) AS g
    FROM stage_samples
    GROUP BY scenario_id, metric
)
