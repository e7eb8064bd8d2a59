"""Backends: one module per backend, plus the shared model specs, inputs and export cache."""
