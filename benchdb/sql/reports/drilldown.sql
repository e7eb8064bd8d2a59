-- Report: what the HTML drill-down shows of each result in $ids: its scenario, statistics, validity,
-- run, and the medians of its other metrics (load_s, first_call_s, export_s, session_create_s,
-- peak memory, ...), as a list of (metric, unit, n, median).
SELECT r.result_id, r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size, r.input_shape,
       CAST(r.options AS VARCHAR) AS options_json, r.threads, r.repeats, r.ci_method, r.metric, r.unit, r.n,
       r.median, r.median_ci_low, r.median_ci_high, r.min, r.p90, r.p99, r.max, r.throughput, r.status,
       r.validity, r.validity_reasons, r.timing_method, r.stop_reason, h.device_name AS hardware_name,
       r.run_id, ru.started_at AS run_started_at, ru.git_commit, ru.host, CAST(ru.config AS VARCHAR) AS run_config,
       (SELECT list({'metric': m.metric, 'unit': m.unit, 'n': m.n, 'median': m.median} ORDER BY m.metric)
          FROM result_metrics m
         WHERE m.result_id = r.result_id AND m.metric <> r.metric)  AS other_metrics
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
WHERE list_contains($ids, r.result_id)
ORDER BY r.model_id, r.batch_size, r.input_shape, h.device_name, r.backend, r.mode, r.precision, r.result_id
