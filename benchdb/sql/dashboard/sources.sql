-- Dashboard: where the results come from, per source and MLPerf round (bdb_sources, views/17_sources.sql).
SELECT * FROM bdb_sources(NULL, NULL)
