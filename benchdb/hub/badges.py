"""Badges: a shields.io endpoint JSON (https://shields.io/badges/endpoint-badge) and the same badge
as a self-contained SVG, per model, from the fastest latest result per hardware kind."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from benchdb import sql

COLOR = "blue"
_SVG_COLOR = "#007ec6"  # shields.io's "blue"


@dataclass(frozen=True)
class Badge:
    model_id: str
    label: str
    message: str
    color: str = COLOR

    @property
    def slug(self) -> str:
        return slug(self.model_id)

    def endpoint_json(self) -> str:
        """The shields.io endpoint document: {"schemaVersion": 1, "label", "message", "color"}."""
        return (
            json.dumps(
                {"schemaVersion": 1, "label": self.label, "message": self.message, "color": self.color},
                ensure_ascii=False,
                indent=2,
            )
            + "\n"
        )

    def svg(self) -> str:
        """A flat badge in the shields.io style: no scripts, fonts, links or images outside it."""
        from benchdb.hub.templates import template

        left, right = _text_width(self.label) + 10, _text_width(self.message) + 10
        return template("badge.svg.j2").render(
            label=self.label, message=self.message, left=left, right=right, color=_SVG_COLOR
        )


def slug(model_id: str) -> str:
    """A file name for a model id: 'org/name' -> 'org--name', 'tiny:bert' -> 'tiny--bert'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "--", model_id).strip("-") or "model"


def badges(con, models: list[str] | None, hardware: list[str] | None) -> list[Badge]:
    """One badge per model with a latest valid result: 'best CPU: onnxruntime 2.1 ms' per kind."""
    from benchdb.reports.render import fmt_quantity

    rows = con.execute(sql.load("hub/badges.sql"), {"models": models, "hardware": hardware}).fetchall()
    parts: dict[str, list[str]] = {}
    for model_id, kind, backend, _hw, batch, _shape, median in rows:
        batch_note = f" (batch {batch})" if batch != 1 else ""
        parts.setdefault(model_id, []).append(f"best {kind.upper()}: {backend} {fmt_quantity(median, 's')}{batch_note}")
    return [Badge(model_id, model_id, " · ".join(p)) for model_id, p in parts.items()]


def _text_width(text: str) -> int:
    """Approximate width in pixels of ``text`` in 11 px Verdana (shields.io's font)."""
    narrow, wide = set("fijlrt.,:;'|!() "), set("mwMW@%")
    return int(sum(3.5 if c in narrow else 10 if c in wide else 7 for c in text)) + 1
