-- Schema 7: measured peaks of each piece of hardware (`benchdb calibrate`), the hardware model's
-- input (the roofline view, `benchdb predict`). One row per (calibration, backend, kind,
-- precision); recalibrating adds rows, never overwrites: the latest per hardware, thread count,
-- kind and precision is the one used (view hardware_peaks), the earlier ones stay as history.
CREATE TABLE hardware_calibration (
    calibration_id   VARCHAR NOT NULL,      -- one `benchdb calibrate` invocation (time-ordered UUID)
    hardware_id      VARCHAR NOT NULL,      -- hardware.hardware_id
    calibrated_at    TIMESTAMP NOT NULL,    -- UTC
    host             VARCHAR,
    benchdb_version  VARCHAR,
    backend          VARCHAR NOT NULL,      -- the library that ran it: numpy | pytorch
    device           VARCHAR NOT NULL,      -- cpu | cuda:0 | ...
    threads          INTEGER,               -- intra-op threads (CPU); NULL on accelerators
    kind             VARCHAR NOT NULL,      -- matmul (FLOP/s) | copy | triad (bytes/s, STREAM-like)
    precision        VARCHAR NOT NULL,      -- fp32 | fp64 | fp16 | bf16 (element type)
    value            DOUBLE NOT NULL,       -- median over trials (FLOP/s or bytes/s)
    ci_low           DOUBLE,                -- 95 % distribution-free CI of the median (NULL: too few trials)
    ci_high          DOUBLE,
    unit             VARCHAR NOT NULL,      -- flop/s | bytes/s
    trials           INTEGER NOT NULL,
    size             BIGINT,                -- matrix order N, or elements per array
    details          JSON,                  -- each trial's value, bytes counted per element, ...
    PRIMARY KEY (calibration_id, backend, kind, precision)
);
