-- The hardware record of a calibrated device, when no ingested run named it yet (same columns as
-- ingest's queries/insert_hardware.sql; an existing record is left as it is).
INSERT OR IGNORE INTO hardware
    (hardware_id, kind, vendor, device_name, memory_bytes, compute_capability, cpu_model,
     cores_physical, cores_logical, arch, os, first_seen_run, fingerprint)
VALUES ($hardware_id, $kind, $vendor, $device_name, $memory_bytes, $compute_capability, $cpu_model,
        $cores_physical, $cores_logical, $arch, $os, NULL, CAST($fingerprint AS JSON));
