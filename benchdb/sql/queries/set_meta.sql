INSERT OR REPLACE INTO benchdb_meta (key, value) VALUES ($1, $2)
