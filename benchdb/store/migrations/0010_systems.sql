-- Schema 10: a system is the unit of hardware (benchdb/schema/system.py). A hardware row
-- describes a whole machine or cluster: its accelerator (kind, vendor, device_name, memory_bytes
-- of one), how many per node and how many nodes, the host CPU's sockets, host memory, the
-- accelerator interconnect, and where known the system's name, availability and cloud instance.
-- The rows already here are systems of one accelerator, or of none for a CPU; hardware declared
-- only by name (a --url server's --server-hardware) has unknown counts (NULL).
ALTER TABLE hardware ADD COLUMN accelerators_per_node INTEGER;
ALTER TABLE hardware ADD COLUMN nodes INTEGER;
ALTER TABLE hardware ADD COLUMN cpu_sockets INTEGER;
ALTER TABLE hardware ADD COLUMN host_memory_bytes BIGINT;
ALTER TABLE hardware ADD COLUMN interconnect VARCHAR;
ALTER TABLE hardware ADD COLUMN system_name VARCHAR;
ALTER TABLE hardware ADD COLUMN availability VARCHAR;     -- available | preview | rdi
ALTER TABLE hardware ADD COLUMN cloud VARCHAR;
ALTER TABLE hardware ADD COLUMN instance VARCHAR;
UPDATE hardware
SET accelerators_per_node = CASE WHEN kind = 'cpu' THEN 0
                                 WHEN kind IN ('remote', 'unknown') THEN NULL ELSE 1 END,
    nodes = CASE WHEN kind IN ('remote', 'unknown') THEN NULL ELSE 1 END;

-- How a result used its system (from its options, so part of its identity): the accelerators it
-- ran on (options.accelerators, else all of the system's) and its parallelism (TP, PP, EP, DP
-- attention, a prefill/decode split with worker counts); NULL where unknown.
ALTER TABLE results ADD COLUMN accelerators INTEGER;
ALTER TABLE results ADD COLUMN parallelism JSON;
UPDATE results AS r
SET accelerators = coalesce(TRY_CAST(r.options ->> 'accelerators' AS INTEGER),
                            h.accelerators_per_node * h.nodes),
    parallelism = r.options -> 'parallelism'
FROM hardware AS h
WHERE h.hardware_id = r.hardware_id;
