-- result_accuracy: per result that is not fp32, how much of fp32's quality it keeps, from what is
-- known: imported task scores (accuracy_scores) of its model at its precision against the same
-- tasks and metrics at fp32 -- score_drop, the largest relative drop, 1 - score / fp32 score
-- (score_basis names that task/metric) -- and its own output's agreement with the fp32 reference
-- on the same inputs (every precision but fp32: benchdb.backends.shared.onnx_export.agreement):
-- top-1 agreement for classifiers, token agreement for generative models, else cosine similarity.
-- sts_drop: 1 - its sentence-similarity score (--sts: sts_spearman) / that of its fp32 twin. accuracy_drop is the imported score
-- drop where there is one (a task's measured accuracy), else the STS drop, else 1 - agreement
-- (0.01 = 1 %); accuracy_basis says which. fp32 results are the reference and have
-- no row, nor do results with neither.
-- fp32_twin: each latest valid result that is not fp32, and one latest valid fp32 result of the same
-- model, batch size, input shape, hardware, backend, mode and threads: what its speedup and its
-- accuracy drop are measured against (report --speed-accuracy, result_accuracy). Where several
-- fp32 series qualify (they differ in options), the twin is the one with the same options (an
-- fp16 or bf16 result: precision is not an option), else one measured in the same run, else the
-- latest; never two, so no result is counted twice.
CREATE OR REPLACE VIEW fp32_twin AS
SELECT r.result_id, b.result_id AS fp32_result_id
FROM results_latest r
JOIN results_latest b
  ON b.model_id = r.model_id AND b.batch_size = r.batch_size AND b.input_shape = r.input_shape
 AND b.hardware_id = r.hardware_id AND b.backend = r.backend AND b.mode = r.mode
 AND b.threads IS NOT DISTINCT FROM r.threads AND b.precision = 'fp32'
WHERE r.precision <> 'fp32'
QUALIFY row_number() OVER (
    PARTITION BY r.result_id
    ORDER BY CASE WHEN b.options IS NOT DISTINCT FROM r.options THEN 0 ELSE 1 END,
             CASE WHEN b.run_id = r.run_id THEN 0 ELSE 1 END,
             b.run_started_at DESC, b.result_id DESC
) = 1;

CREATE OR REPLACE VIEW result_accuracy AS
WITH m AS (
    SELECT result_id,
           max(median) FILTER (WHERE metric = 'top1_agreement')    AS top1,
           max(median) FILTER (WHERE metric = 'token_agreement')   AS token,
           max(median) FILTER (WHERE metric = 'cosine_similarity') AS cosine
    FROM result_metrics
    WHERE metric IN ('top1_agreement', 'token_agreement', 'cosine_similarity')
    GROUP BY result_id
),
agreement AS (
    SELECT result_id,
           CASE WHEN top1 IS NOT NULL THEN 'top1_agreement'
                WHEN token IS NOT NULL THEN 'token_agreement'
                ELSE 'cosine_similarity' END AS agreement_metric,
           coalesce(top1, token, cosine)    AS agreement
    FROM m
),
sts AS (
    SELECT t.result_id, 1 - m.median / f.median AS drop
    FROM fp32_twin t
    JOIN result_metrics m ON m.result_id = t.result_id AND m.metric = 'sts_spearman'
    JOIN result_metrics f ON f.result_id = t.fp32_result_id AND f.metric = 'sts_spearman'
    WHERE f.median > 0
),
score_drop AS (
    SELECT s.model_id, s.precision,
           max(1 - s.value / f.value)                                    AS drop,
           arg_max(s.task || '/' || s.metric, 1 - s.value / f.value)     AS worst
    FROM accuracy_scores s
    JOIN accuracy_scores f
      ON f.model_id = s.model_id AND f.task = s.task AND f.metric = s.metric AND f.precision = 'fp32'
    WHERE s.precision <> 'fp32' AND f.value > 0
    GROUP BY s.model_id, s.precision
)
SELECT r.result_id,
       a.agreement_metric, a.agreement,
       d.drop                                     AS score_drop,
       d.worst                                    AS score_basis,
       t.drop                                     AS sts_drop,
       coalesce(d.drop, t.drop, 1 - a.agreement)  AS accuracy_drop,
       CASE WHEN d.drop IS NOT NULL THEN 'lm-eval ' || d.worst
            WHEN t.drop IS NOT NULL THEN 'sts_spearman'
            ELSE a.agreement_metric END           AS accuracy_basis
FROM results r
LEFT JOIN agreement a ON a.result_id = r.result_id
LEFT JOIN score_drop d ON d.model_id = r.model_id AND d.precision = r.precision
LEFT JOIN sts t ON t.result_id = r.result_id
WHERE r.precision <> 'fp32' AND r.mode <> 'accuracy'
  AND (a.result_id IS NOT NULL OR d.drop IS NOT NULL OR t.drop IS NOT NULL);
