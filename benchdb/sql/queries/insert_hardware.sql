INSERT OR IGNORE INTO hardware BY NAME
SELECT hardware_id, kind, vendor, device_name, memory_bytes, compute_capability, cpu_model,
       cores_physical, cores_logical, arch, os, first_seen_run, CAST(fingerprint AS JSON) AS fingerprint,
       accelerators_per_node, nodes, cpu_sockets, host_memory_bytes, interconnect, system_name,
       availability, cloud, instance
FROM new_hardware
