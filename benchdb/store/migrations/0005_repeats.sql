-- Schema 5: repeats as a level of the data. A scenario measured with --repeats K ran in K
-- separate processes; each sample keeps its process (samples.repeat), each result its K
-- (results.repeats) and how its median CI was computed (results.ci_method: order_statistics
-- over one process's iterations, or hierarchical_bootstrap over processes then iterations).
ALTER TABLE samples ADD COLUMN repeat INTEGER DEFAULT 0;
ALTER TABLE results ADD COLUMN repeats INTEGER DEFAULT 1;
ALTER TABLE results ADD COLUMN ci_method VARCHAR DEFAULT 'order_statistics';
