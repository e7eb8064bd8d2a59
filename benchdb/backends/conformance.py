"""mypy checks benchdb's own backends against the :class:`~benchdb.backends.protocol.Backend` protocol
here. Nothing imports this module: it exists for the type checker (``mypy benchdb``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchdb.backends.protocol import Backend

if TYPE_CHECKING:
    from benchdb.backends.numpy import backend as _numpy
    from benchdb.backends.onnxruntime import backend as _onnxruntime
    from benchdb.backends.openai import backend as _openai
    from benchdb.backends.openvino import backend as _openvino
    from benchdb.backends.ortweb import backend as _ortweb
    from benchdb.backends.pytorch import backend as _pytorch
    from benchdb.backends.userbench import backend as _userbench

    _checked: list[Backend] = [_numpy, _onnxruntime, _openai, _openvino, _ortweb, _pytorch, _userbench]
