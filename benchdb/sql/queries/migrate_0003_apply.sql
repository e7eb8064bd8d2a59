-- Migration 0003: write the rebuilt identity (registered as identity_updates) onto results.
UPDATE results AS r
SET device = u.device, precision = u.precision, input_shape = u.input_shape, validity = u.validity,
    validity_reasons = u.validity_reasons, options = CAST(u.options AS JSON),
    options_id = u.options_id, series_id = u.series_id
FROM identity_updates AS u
WHERE r.result_id = u.result_id
