-- Measured peaks of every calibrated hardware configuration (hardware_peaks with names).
SELECT p.hardware_id, h.device_name AS hardware_name, h.kind AS hardware_kind, p.threads, p.kind,
       p.precision, p.value, p.ci_low, p.ci_high, p.backend, p.calibrated_at
FROM hardware_peaks p
JOIN hardware h USING (hardware_id)
ORDER BY p.hardware_id, p.threads, p.kind, p.precision;
