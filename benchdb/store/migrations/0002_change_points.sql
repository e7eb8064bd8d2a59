-- Change points found in each series' history (benchdb.analysis.changepoints), and their review.
CREATE TABLE change_points (
    change_id       VARCHAR PRIMARY KEY,     -- hash of (series_id, first run after the shift)
    series_id       VARCHAR NOT NULL,        -- as in the trends view
    model_id        VARCHAR NOT NULL,
    backend         VARCHAR NOT NULL,
    device          VARCHAR NOT NULL,
    mode            VARCHAR NOT NULL,
    precision       VARCHAR NOT NULL,
    batch_size      INTEGER NOT NULL,
    input_shape     VARCHAR NOT NULL,
    hardware_id     VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,        -- the first run after the shift
    run_started_at  TIMESTAMP,
    git_commit      VARCHAR,
    before_median   DOUBLE,                  -- median of the segment before (seconds)
    after_median    DOUBLE,                  -- median of the segment after
    change          DOUBLE,                  -- after / before - 1 (+0.10 = 10 % slower)
    p_value         DOUBLE,                  -- permutation test of the E-divisive statistic
    points_before   INTEGER,
    points_after    INTEGER,
    detected_at     TIMESTAMP NOT NULL,
    status          VARCHAR NOT NULL,        -- open | acked
    note            VARCHAR,
    acked_at        TIMESTAMP
);
