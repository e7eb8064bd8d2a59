"""The performance model (not the ML models being benchmarked): measured peaks of a device
(:mod:`.calibrate`) and latency predicted for hardware that was not measured (:mod:`.predict`)."""
