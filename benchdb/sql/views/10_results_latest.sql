-- results_latest: the latest valid, successful result per scenario key and hardware.
-- One row per (model_id, backend, device, mode, precision, batch_size, input_shape, hardware_id),
-- taken from the most recent run (runs.started_at) that measured it.
CREATE OR REPLACE VIEW results_latest AS
SELECT r.*,
       ru.started_at AS run_started_at,
       ru.git_commit,
       h.device_name AS hardware_name,
       h.kind        AS hardware_kind
FROM results r
JOIN runs ru USING (run_id)
JOIN hardware h USING (hardware_id)
WHERE r.status = 'ok' AND r.validity = 'valid'
QUALIFY row_number() OVER (
    PARTITION BY r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size,
                 r.input_shape, r.hardware_id
    ORDER BY ru.started_at DESC, r.result_id DESC
) = 1;
