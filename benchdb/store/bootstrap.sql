-- Bookkeeping tables that exist before any numbered migration runs.
CREATE TABLE IF NOT EXISTS schema_version (
    version          INTEGER PRIMARY KEY,
    name             VARCHAR NOT NULL,
    applied_at       TIMESTAMP NOT NULL,
    benchdb_version  VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS benchdb_meta (
    key    VARCHAR PRIMARY KEY,
    value  VARCHAR
);
