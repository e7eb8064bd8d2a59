"""The precision a server started by benchdb computes in, so a serving result's precision is the
server's, not the client's default.

A bf16 model served by ``transformers serve`` was recorded as ``fp32`` (the run's default
precision): the precision axis of a serving result must name what the server ran. Where benchdb
can tell, it does: a ``--dtype`` / ``--torch-dtype`` flag in the command template, else the local
model folder's ``config.json`` (``dtype``, older ``torch_dtype``). A quantized server (``--quantization``,
``--kv-cache-dtype``) stays in its options and command, which are part of the identity already.
For a server at ``--url`` benchdb cannot see the weights: the user's ``--precision`` stands.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from benchdb.errors import BenchdbError

#: dtype spellings of serving programs and configs -> benchdb's precision names
DTYPES = {
    "bfloat16": "bf16",
    "bf16": "bf16",
    "float16": "fp16",
    "fp16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "fp32": "fp32",
    "float": "fp32",
    "float64": "fp64",
    "double": "fp64",
}

_FLAGS = ("--dtype", "--torch-dtype", "--torch_dtype")


def from_command(template: str) -> str | None:
    """The precision a ``--dtype X`` (or ``--dtype=X``) flag in the command names; None when the
    command leaves it to the weights (no flag, or ``auto``)."""
    try:
        words = shlex.split(template)
    except ValueError:
        return None
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag in _FLAGS:
            value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            return DTYPES.get(value.strip().lower())
    return None


def from_model(model: str) -> str | None:
    """The dtype a local model folder's config.json records; None for anything else."""
    path = Path(model) / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    value = config.get("dtype") or config.get("torch_dtype")
    return DTYPES.get(str(value).lower()) if value else None


def served(template: str, model: str, asked: tuple[str, ...], default: tuple[str, ...]) -> tuple[str, ...]:
    """The precisions to record for ``model`` served by ``template``: the one the server runs
    where benchdb can tell, else ``asked``. Asking for another precision than the server runs (not
    the run's default) is refused: benchdb cannot make the server compute in it."""
    found = from_command(template) or from_model(model)
    if found is None:
        return asked
    if asked != default and asked != (found,):
        raise BenchdbError(
            f"--precision {','.join(asked)}: the server runs {model} in {found} (its "
            f"{'command' if from_command(template) else 'config.json dtype'}); give "
            f"--precision {found}, or a --dtype flag in --server for another"
        )
    return (found,)
