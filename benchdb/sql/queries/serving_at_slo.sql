-- Report (`benchdb report --serving --slo`): each serving configuration at the SLO
-- (bdb_serving_at_slo) under the filters, ranked among the configurations the filters keep (best
-- output-token throughput per device first). Not in reports/: it is DuckDB-only (a table macro with
-- QUALIFY and LATERAL), and every reports/ query also runs on Spark.
SELECT * REPLACE (
           CASE WHEN output_throughput_per_device IS NOT NULL THEN
               rank() OVER (PARTITION BY model_id, endpoint, in_tokens, out_tokens,
                                         output_throughput_per_device IS NULL
                            ORDER BY output_throughput_per_device DESC) END AS rank)
FROM bdb_serving_at_slo($max_ttft_p90_s, $max_tpot_p50_s, $min_interactivity,
                        MAP($price_names::VARCHAR[], $price_values::DOUBLE[]))
WHERE ($models IS NULL OR list_contains($models, model_id))
  AND ($hardware IS NULL OR list_contains($hardware, hardware_name) OR list_contains($hardware, hardware_id))
ORDER BY model_id, endpoint, in_tokens, out_tokens, rank NULLS LAST, hardware_name, engine, precision, load_kind
