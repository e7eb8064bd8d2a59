"""The Hugging Face Hub: `benchdb publish` (a dataset, its card and badges).

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

COMMANDS: list = []
