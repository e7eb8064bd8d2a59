-- Schema 3: one scenario identity (benchdb/schema/identity.py).
-- results gain the backend's option set (JSON), its hash, and the series id (scenario key with
-- options, on one piece of hardware), so views group on stored columns. 0003_identity.py fills
-- them for existing rows from what each result recorded (settings, threads, extra), in the same
-- transaction, and re-keys change points to the new series ids.
ALTER TABLE results ADD COLUMN options JSON;
ALTER TABLE results ADD COLUMN options_id VARCHAR;
ALTER TABLE results ADD COLUMN series_id VARCHAR;
ALTER TABLE change_points ADD COLUMN options_id VARCHAR;
DROP MACRO IF EXISTS bdb_series_id;
