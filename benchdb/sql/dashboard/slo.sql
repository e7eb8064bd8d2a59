-- Dashboard: the best serving configuration at an SLO (bdb_serving_at_slo): per model, endpoint
-- and token counts, each configuration's most output-token throughput per device while TTFT p90
-- <= ttft_ms and TPOT p50 <= tpot_ms (or interactivity >= interactivity tokens/s per user), best
-- first, monotone and never extrapolated (slo_status says how the answer was reached).
SELECT rank() OVER (PARTITION BY model_id, endpoint, in_tokens, out_tokens, output_throughput_per_device IS NULL
                    ORDER BY output_throughput_per_device DESC) AS rank,
       model_id, endpoint, in_tokens, out_tokens, hardware_name, engine, precision, load_kind, slo_status,
       load_at_slo, output_throughput_per_device, interactivity, ttft_p90_s, tpot_p50_s,
       lower_result_id, upper_result_id
FROM bdb_serving_at_slo(TRY_CAST($ttft_ms AS DOUBLE) / 1000, TRY_CAST($tpot_ms AS DOUBLE) / 1000,
                        TRY_CAST($interactivity AS DOUBLE), MAP {}::MAP(VARCHAR, DOUBLE))
WHERE ($model IS NULL OR model_id = $model)
ORDER BY model_id, endpoint, in_tokens, out_tokens, output_throughput_per_device DESC NULLS LAST, hardware_name
