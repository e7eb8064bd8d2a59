-- compat_matrix: which model families run where, and how well.
-- One row per (family, model_type, hardware, backend) pair that was tried; a pair never tried has
-- no row (gaps are never filled from other models). Counts are over results_current.
-- relative_throughput: median over the pair's ok results of throughput / the best throughput of
-- the same model, batch size and input shape on any hardware/backend (1.0 = the fastest).
-- rating: 3 best (>= 0.75), 2 good (>= 0.4), 1 slow (< 0.4), 0 broken (nothing ran).
CREATE OR REPLACE VIEW compat_matrix AS
WITH cur AS (
    SELECT c.*, a.family, a.model_type,
           c.throughput / max(c.throughput) FILTER (WHERE c.status = 'ok') OVER (
               PARTITION BY c.model_id, c.batch_size, c.input_shape) AS rel
    FROM results_current c
    JOIN architectures a USING (arch_id)
)
SELECT coalesce(family, 'unknown')                          AS family,
       coalesce(model_type, 'unknown')                      AS model_type,
       hardware_id,
       any_value(hardware_name)                             AS hardware_name,
       any_value(hardware_kind)                             AS hardware_kind,
       backend,
       count(*)                                             AS results,
       count(*) FILTER (WHERE status = 'ok')                AS ok,
       count(*) FILTER (WHERE status = 'failed')            AS failed,
       count(*) FILTER (WHERE status = 'oom')               AS oom,
       count(*) FILTER (WHERE status = 'timeout')           AS timeout,
       count(*) FILTER (WHERE status = 'unsupported')       AS unsupported,
       count(*) FILTER (WHERE status = 'mismatch')          AS mismatch,
       count(*) FILTER (WHERE status = 'skipped')           AS skipped,
       median(rel) FILTER (WHERE status = 'ok')             AS relative_throughput,
       CASE WHEN count(*) FILTER (WHERE status = 'ok') = 0 THEN 0
            WHEN median(rel) FILTER (WHERE status = 'ok') >= 0.75 THEN 3
            WHEN median(rel) FILTER (WHERE status = 'ok') >= 0.4 THEN 2
            ELSE 1 END                                      AS rating,
       CASE WHEN count(*) FILTER (WHERE status = 'ok') = 0 THEN 'broken'
            WHEN median(rel) FILTER (WHERE status = 'ok') >= 0.75 THEN 'best'
            WHEN median(rel) FILTER (WHERE status = 'ok') >= 0.4 THEN 'good'
            ELSE 'slow' END                                 AS rating_label,
       mode(error) FILTER (WHERE status <> 'ok')            AS top_error
FROM cur
GROUP BY ALL;
