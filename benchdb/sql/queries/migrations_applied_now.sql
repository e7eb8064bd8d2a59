-- A new warehouse made from the cached blank catalog (store/database.py blank_catalog): its
-- migrations count as applied when the warehouse was made, not when the blank was built.
UPDATE schema_version SET applied_at = timezone('UTC', now())
