"""Small wording helpers shared by the command line, the reports and the runners."""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 scenario', '2 scenarios' ('many': an irregular plural)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
