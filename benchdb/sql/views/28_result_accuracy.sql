-- result_accuracy: per result whose output was compared with the fp32 reference of the same model
-- on the same inputs (every precision but fp32: benchdb.backends.shared.onnx_export.agreement), the
-- figure an accuracy constraint reads (report --max-accuracy-drop): top-1 agreement for classifiers,
-- token agreement for generative models, else the cosine similarity of the outputs; accuracy_drop
-- is 1 minus it (0.01 = 1 %). fp32 results are the reference and have no row.
CREATE OR REPLACE VIEW result_accuracy AS
WITH m AS (
    SELECT result_id,
           max(median) FILTER (WHERE metric = 'top1_agreement')    AS top1,
           max(median) FILTER (WHERE metric = 'token_agreement')   AS token,
           max(median) FILTER (WHERE metric = 'cosine_similarity') AS cosine
    FROM result_metrics
    WHERE metric IN ('top1_agreement', 'token_agreement', 'cosine_similarity')
    GROUP BY result_id
)
SELECT result_id,
       CASE WHEN top1 IS NOT NULL THEN 'top1_agreement'
            WHEN token IS NOT NULL THEN 'token_agreement'
            ELSE 'cosine_similarity' END            AS agreement_metric,
       coalesce(top1, token, cosine)                 AS agreement,
       1 - coalesce(top1, token, cosine)             AS accuracy_drop
FROM m;
