-- benchdb warehouse, schema version 1.
-- Applied inside one transaction together with its schema_version row.

CREATE TABLE ingested_files (
    file_id      BIGINT PRIMARY KEY,        -- assigned by ingest
    path         VARCHAR NOT NULL,          -- absolute path at ingest time
    size_bytes   BIGINT NOT NULL,
    mtime_ns     BIGINT NOT NULL,
    sha256       VARCHAR NOT NULL,          -- content hash: the dedupe key
    rows         BIGINT,                    -- sample rows loaded (NULL when rejected)
    status       VARCHAR NOT NULL,          -- ingested | rejected | duplicate
    error        VARCHAR,                   -- why it was rejected
    ingested_at  TIMESTAMP NOT NULL
);
CREATE INDEX ingested_files_sha256 ON ingested_files (sha256);

CREATE TABLE hardware (
    hardware_id         VARCHAR PRIMARY KEY, -- hash of the normalised fingerprint
    kind                VARCHAR NOT NULL,    -- cpu | cuda | rocm | mps | xpu | npu | gpu
    vendor              VARCHAR,
    device_name         VARCHAR NOT NULL,
    memory_bytes        BIGINT,
    compute_capability  VARCHAR,
    cpu_model           VARCHAR,
    cores_physical      INTEGER,
    cores_logical       INTEGER,
    arch                VARCHAR,
    os                  VARCHAR,
    first_seen_run      VARCHAR,
    fingerprint         JSON                 -- the whole fingerprint as first seen
);

CREATE TABLE architectures (
    arch_id         VARCHAR PRIMARY KEY,     -- hash of (model_id, revision)
    model_id        VARCHAR NOT NULL,
    revision        VARCHAR,
    model_type      VARCHAR,
    architecture    VARCHAR,                 -- e.g. BertModel
    family          VARCHAR,                 -- e.g. embedding, text_generation, vision
    task            VARCHAR,
    num_parameters  BIGINT,
    flops_per_item  DOUBLE,
    info            JSON
);

CREATE TABLE runs (
    run_id           VARCHAR PRIMARY KEY,    -- time-ordered UUID (v7)
    started_at       TIMESTAMP NOT NULL,
    host             VARCHAR,
    benchdb_version  VARCHAR,
    git_commit       VARCHAR,
    software         JSON,                   -- library versions
    config           JSON,                   -- the run's configuration
    tags             VARCHAR[]
);

CREATE TABLE results (
    result_id         VARCHAR PRIMARY KEY,   -- = the scenario id of the contract file
    run_id            VARCHAR NOT NULL,
    file_id           BIGINT NOT NULL,
    hardware_id       VARCHAR NOT NULL,
    arch_id           VARCHAR NOT NULL,
    model_id          VARCHAR NOT NULL,
    backend           VARCHAR NOT NULL,
    device            VARCHAR NOT NULL,
    mode              VARCHAR NOT NULL,
    precision         VARCHAR NOT NULL,
    batch_size        INTEGER NOT NULL,
    input_shape       VARCHAR NOT NULL,
    status            VARCHAR NOT NULL,      -- ok | failed | oom | timeout | unsupported | skipped | mismatch
    error             VARCHAR,
    validity          VARCHAR NOT NULL,      -- valid | invalid
    validity_reasons  VARCHAR[],
    timing_method     VARCHAR,
    driver            VARCHAR,               -- device driver when the result was measured
    threads           INTEGER,
    load_avg_1m       DOUBLE,
    stop_reason       VARCHAR,
    started_at        TIMESTAMP,
    metric            VARCHAR,               -- the primary metric the statistics below describe
    unit              VARCHAR,
    n                 BIGINT,
    mean              DOUBLE,
    median            DOUBLE,
    min               DOUBLE,
    max               DOUBLE,
    stddev            DOUBLE,
    p25               DOUBLE,                -- NULL when too few samples for that percentile
    p75               DOUBLE,
    p90               DOUBLE,
    p95               DOUBLE,
    p99               DOUBLE,
    median_ci_low     DOUBLE,                -- 95 % distribution-free CI of the median
    median_ci_high    DOUBLE,
    throughput        DOUBLE,                -- items per second at the median
    settings          JSON,
    extra             JSON
);

-- Statistics of every metric of every scenario (the primary one is repeated in results).
CREATE TABLE result_metrics (
    result_id       VARCHAR NOT NULL,
    metric          VARCHAR NOT NULL,
    unit            VARCHAR,
    n               BIGINT,
    mean            DOUBLE,
    median          DOUBLE,
    min             DOUBLE,
    max             DOUBLE,
    stddev          DOUBLE,
    p25             DOUBLE,
    p75             DOUBLE,
    p90             DOUBLE,
    p95             DOUBLE,
    p99             DOUBLE,
    median_ci_low   DOUBLE,
    median_ci_high  DOUBLE
);

-- Raw samples. Deliberately no key or index: dedupe happens per file at ingest.
-- The file a sample came from is results.file_id of its result.
CREATE TABLE samples (
    result_id   VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,
    unit        VARCHAR,
    iteration   INTEGER,
    t_offset_s  DOUBLE,
    value       DOUBLE NOT NULL
);
