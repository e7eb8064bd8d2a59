-- Migration 0003: change points re-keyed to the new series ids (registered as moved_change_points).
INSERT INTO change_points BY NAME SELECT * FROM moved_change_points
