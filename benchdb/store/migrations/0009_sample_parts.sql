-- Raw samples move out of the warehouse file into immutable Parquet parts beside it
-- (benchdb/schema/parts.py), so that a write copies the small catalog, not every sample.
-- The table is renamed here; the write session running this migration writes its rows into the
-- first part, drops it, and creates the `samples` view over the parts, in the same publish.
ALTER TABLE samples RENAME TO samples_unmoved;
