-- The normalisations (bdb_normalisations, macros.sql) in the order they are offered, the default first.
SELECT name, label, unit_suffix, priced, missing, note
FROM bdb_normalisations()
ORDER BY position
