-- Where the warehouse's samples are: the published generations and the folder (store/parts.py).
SELECT key, value FROM benchdb_meta WHERE list_contains($1, key)
