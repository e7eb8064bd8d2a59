"""benchdb: a benchmark data warehouse for ML inference across hardware.

Importing this package imports nothing heavy: no torch, onnxruntime or openvino.
"""

__version__ = "0.2.0"
