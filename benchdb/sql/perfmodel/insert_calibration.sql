-- One measured peak of one calibration (benchdb/perfmodel/calibrate.py); rows are only ever added.
INSERT INTO hardware_calibration
    (calibration_id, hardware_id, calibrated_at, host, benchdb_version, backend, device, threads,
     kind, precision, value, ci_low, ci_high, unit, trials, size, details)
VALUES ($calibration_id, $hardware_id, CAST($calibrated_at AS TIMESTAMP), $host, $benchdb_version, $backend,
        $device, $threads, $kind, $precision, $value, $ci_low, $ci_high, $unit, $trials, $size,
        CAST($details AS JSON));
