"""Errors a user can cause. The CLI prints them as one line and exits non-zero."""


class BenchdbError(Exception):
    """A user-facing error: the message names the thing and what to do."""

    exit_code = 2

    def __init__(self, message: str = "", *, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class BackendUnavailable(BenchdbError):
    """An optional backend (torch, onnxruntime, openvino, ...) is not installed."""
