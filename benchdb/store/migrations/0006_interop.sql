-- Schema 6: results imported from other tools' files (`benchdb import`).
-- result_sources: the provenance of every imported result (source format, file, tool and its
-- version) and whether the source kept raw samples. A summary-only result (an MLPerf LoadGen log)
-- has no samples: its results row has n = 0 and NULL statistics, and the tool's own figures are
-- in source_statistics, never mixed into the statistics benchdb computes from samples.
CREATE TABLE result_sources (
    result_id          VARCHAR PRIMARY KEY,   -- results.result_id
    format             VARCHAR NOT NULL,      -- optimum-benchmark | pytest-benchmark | transformers-benchmark-v2 | hud-v3 | mlperf-loadgen
    source_file        VARCHAR NOT NULL,      -- the file it was imported from (as given to benchdb import)
    tool               VARCHAR NOT NULL,
    tool_version       VARCHAR,
    summary_only       BOOLEAN NOT NULL,      -- true: no raw samples; see source_statistics
    percentile_method  VARCHAR                -- how the source computed percentiles (nearest_rank for LoadGen)
);

-- The statistics a source computed itself (long format: one row per result, metric and statistic).
CREATE TABLE source_statistics (
    result_id          VARCHAR NOT NULL,
    metric             VARCHAR NOT NULL,
    unit               VARCHAR,
    statistic          VARCHAR NOT NULL,      -- mean | min | max | median | p50 | p90 | ... | value | count
    value              DOUBLE NOT NULL,
    percentile_method  VARCHAR
);
