"""Other tools' result files: `benchdb import` (foreign formats into contract files) and `benchdb export`.

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

COMMANDS: list = []
