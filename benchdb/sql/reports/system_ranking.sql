-- Report: every system side by side (report --optimal-hardware --per): per model, input shape (an
-- MLPerf result's names its scenario) and batch size, each system's latest valid figure (system_results:
-- measured or published) normalised per $per (a name of bdb_normalisations(): bdb_system_per, with
-- prices $price_names/$price_values by system or hardware name and $accelerator_price_names/values by
-- accelerator), ranked best first. normalised_ci_low/high: a measured figure's interval normalised
-- alike; a published figure has none. missing: why a figure has no normalised value (and so no rank).
-- precision, backend and options (an import's submitter and system id) tell apart two systems that
-- share a name.
SELECT model_id, mode, input_shape, batch_size, system_rank AS rank,
       system_name, accelerator, accelerators, devices, hardware_id, summary_only, measured_by, n, precision,
       backend, options,
       value, unit, higher_is_better, value_ci_low, value_ci_high, power_w, price_per_hour,
       normalised, normalised_unit, normalised_ci_low, normalised_ci_high,
       missing, result_id
FROM bdb_system_per($per, MAP($price_names::VARCHAR[], $price_values::DOUBLE[]),
                    MAP($accelerator_price_names::VARCHAR[], $accelerator_price_values::DOUBLE[]), $models, $hardware)
ORDER BY model_id, input_shape, batch_size, normalised IS NULL, rank, system_name, mode, result_id
