"""MLPerf Inference results: LoadGen logs, whole results repositories, Endpoints curves, and the
rules they are checked by."""
