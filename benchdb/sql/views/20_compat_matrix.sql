-- compat_matrix: which model families run where, and how well.
-- One row per (family, model_type, hardware, backend) pair that was tried; a pair never tried has
-- no row (gaps are never filled from other models). Counts are over results_current (the latest
-- timing attempt of every series; --verify-only checks are in the verification view).
-- ok counts status ok; invalid counts those of them that are invalid (too few samples, noisy,
-- busy machine): they ran, but their timing is not trusted, so they are not rated.
-- relative_throughput: median over the pair's rated results (status ok, valid, a timing) of
-- throughput / the best rated throughput of the same model, batch size and input shape on any
-- hardware/backend (1.0 exactly = the fastest; invalid results never count, on either side).
-- rating: 3 best (relative_throughput = 1: the fastest for the median of its model/batch/shape;
-- only one pair can be fastest for a given model, batch size and shape, barring exactly equal
-- throughput), 2 good (>= 0.4), 1 slow (< 0.4), 0 with no rated result: rating_label 'broken'
-- when nothing ran ok, 'unrated' when it ran but every timing was invalid.
CREATE OR REPLACE VIEW compat_matrix AS
WITH cur AS (
    SELECT c.*, a.family, a.model_type,
           coalesce(c.status = 'ok' AND c.validity = 'valid' AND c.unit = 's' AND c.throughput > 0,
                    false) AS rated
    FROM results_current c
    JOIN architectures a USING (arch_id)
),
scored AS (
    SELECT *,
           CASE WHEN rated THEN throughput / max(throughput) FILTER (WHERE rated) OVER (
               PARTITION BY model_id, batch_size, input_shape) END AS rel
    FROM cur
),
pairs AS (
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
           count(*) FILTER (WHERE status = 'ok' AND NOT rated)  AS invalid,
           count(*) FILTER (WHERE rated)                        AS rated_results,
           median(rel) FILTER (WHERE rated)                     AS relative_throughput,
           mode(error) FILTER (WHERE status <> 'ok')            AS top_error
    FROM scored
    GROUP BY ALL
)
SELECT family, model_type, hardware_id, hardware_name, hardware_kind, backend, results, ok, failed, oom,
       timeout, unsupported, mismatch, skipped, invalid, relative_throughput,
       CASE WHEN rated_results = 0 THEN 0
            WHEN relative_throughput = 1 THEN 3
            WHEN relative_throughput >= 0.4 THEN 2
            ELSE 1 END                                          AS rating,
       CASE WHEN ok = 0 THEN 'broken'
            WHEN rated_results = 0 THEN 'unrated'
            WHEN relative_throughput = 1 THEN 'best'
            WHEN relative_throughput >= 0.4 THEN 'good'
            ELSE 'slow' END                                     AS rating_label,
       top_error
FROM pairs;
