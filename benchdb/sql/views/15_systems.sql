-- systems: every piece of hardware as a system (benchdb/schema/system.py): its accelerator (NULL
-- for a CPU-only system), accelerators per node, nodes and in all, host CPU, memory, interconnect,
-- name, availability and cloud instance, with how many results ran on it. A device benchdb measured
-- itself is a system of one accelerator (or none); hardware known only by name has NULL counts.
CREATE OR REPLACE VIEW systems AS
SELECT h.hardware_id,
       coalesce(h.system_name, h.device_name)                         AS system_name,
       h.kind,
       CASE WHEN h.kind = 'cpu' THEN NULL ELSE h.vendor END            AS accelerator_vendor,
       CASE WHEN h.kind = 'cpu' THEN NULL ELSE h.device_name END       AS accelerator,
       CASE WHEN h.kind = 'cpu' THEN NULL ELSE h.memory_bytes END      AS accelerator_memory_bytes,
       h.accelerators_per_node, h.nodes,
       h.accelerators_per_node * h.nodes                               AS accelerators,
       h.cpu_model, h.cpu_sockets, h.cores_physical, h.host_memory_bytes, h.interconnect,
       h.availability, h.cloud, h.instance,
       (SELECT count(*) FROM results r WHERE r.hardware_id = h.hardware_id) AS results
FROM hardware h;
