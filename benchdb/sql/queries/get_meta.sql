SELECT value FROM benchdb_meta WHERE key = $1
