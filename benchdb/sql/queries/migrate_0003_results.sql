-- Migration 0003: what each existing result recorded, for rebuilding its identity in Python.
SELECT r.result_id, r.run_id, r.model_id, r.backend, r.device, r.mode, r.precision, r.batch_size,
       r.input_shape, r.hardware_id, r.threads, r.validity, r.validity_reasons,
       CAST(r.settings AS VARCHAR) AS settings, CAST(r.extra AS VARCHAR) AS extra,
       CAST(h.fingerprint AS VARCHAR) AS fingerprint, CAST(ru.config AS VARCHAR) AS config
FROM results r
LEFT JOIN hardware h USING (hardware_id)
LEFT JOIN runs ru USING (run_id)
