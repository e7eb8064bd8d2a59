-- A synthetic warehouse catalog for benchmarks/report.py: $models models x $hardware hardware x 5 backends
-- x 5 batch sizes results, spread over 20 runs; their raw samples are report_fixture_samples.sql,
-- written as a part of the samples folder (benchdb/store/parts.py), as ingest writes them.
INSERT INTO hardware (hardware_id, kind, device_name)
SELECT 'hw' || i, CASE WHEN i % 2 = 0 THEN 'cpu' ELSE 'cuda' END, 'Hardware ' || i
FROM range($hardware) t(i);

INSERT INTO architectures (arch_id, model_id, model_type, family)
SELECT 'a' || i, 'model-' || i, 'type' || (i % 13),
       ['embedding', 'text_generation', 'vision', 'audio', 'multimodal'][1 + i % 5]
FROM range($models) t(i);

INSERT INTO runs (run_id, started_at, git_commit)
SELECT 'run' || i, TIMESTAMP '2026-01-01' + i * INTERVAL 1 DAY, 'commit' || i FROM range(20) t(i);

INSERT INTO results (result_id, run_id, file_id, hardware_id, arch_id, model_id, backend, device, mode,
                     precision, batch_size, input_shape, status, validity, n, median, throughput, series_id,
                     metric, unit)
SELECT 'r' || id, 'run' || (id % 20), id, 'hw' || h, 'a' || m, 'model-' || m,
       ['pytorch', 'onnxruntime', 'openvino', 'numpy', 'tensorrt'][1 + b],
       CASE WHEN h % 2 = 0 THEN 'cpu' ELSE 'cuda' END, 'eager', 'fp32', bs, 'seq_len=128',
       CASE WHEN id % 17 = 0 THEN 'failed' ELSE 'ok' END, 'valid', $samples_per_result,
       0.001 * bs * (1 + h) * (1 + b) * (1 + m % 7) / 10,
       bs / (0.001 * bs * (1 + h) * (1 + b) * (1 + m % 7) / 10),
       -- a synthetic series id (one per model x hardware x backend x batch size); real ones come
       -- from benchdb/schema/identity.py at ingest
       'series-' || m || '-' || h || '-' || b || '-' || bs,
       'latency_s', 's'
FROM (SELECT row_number() OVER () AS id, m, h, b, bs
      FROM range($models) t1(m), range($hardware) t2(h), range(5) t3(b), (SELECT unnest([1, 2, 4, 8, 16]) AS bs));

INSERT INTO result_metrics (result_id, metric, unit, n, median, max)
SELECT result_id, 'latency_s', 's', n, median, median * 1.2 FROM results;

INSERT INTO result_metrics (result_id, metric, unit, n, median, max)
SELECT result_id, 'peak_rss_bytes', 'bytes', 1, 1e9, 1e9 FROM results;
