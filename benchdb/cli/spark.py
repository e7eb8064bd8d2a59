"""Other engines: `benchdb sql --dialect spark` (the views and report queries, translated).

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

COMMANDS: list = []
