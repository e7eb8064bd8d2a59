"""The hardware model: `benchdb calibrate` (measured peaks) and `benchdb predict`.

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

COMMANDS: list = []
