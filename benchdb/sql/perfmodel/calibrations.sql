-- Every calibration row with its hardware's name (newest first), for `benchdb calibrate --list`.
SELECT c.calibration_id, c.calibrated_at, h.device_name AS hardware_name, c.hardware_id, c.backend,
       c.device, c.threads, c.kind, c.precision, c.value, c.ci_low, c.ci_high, c.unit, c.trials, c.size
FROM hardware_calibration c
JOIN hardware h USING (hardware_id)
ORDER BY c.calibrated_at DESC, c.backend, c.kind, c.precision;
