"""benchdb.hub.templates: the Hub's card and badge templates, read from the package. A badge's SVG
escapes what it shows (a model id is text, never markup), and a variable a template names that the
caller did not give is an error, never an empty string on the Hub."""

from __future__ import annotations

import jinja2
import pytest

from benchdb.hub import templates

pytestmark = pytest.mark.core


def test_templates_are_read_from_the_package():
    assert templates.source("columns.yaml").strip()
    assert templates.template("badge.svg.j2") is templates.template("badge.svg.j2")  # parsed once


def test_the_svg_badge_escapes_what_it_shows_and_every_variable_must_be_given():
    svg = templates.template("badge.svg.j2").render(
        left=40, right=60, color="#007ec6", label="<org>/bert", message="a & b"
    )
    assert "&lt;org&gt;/bert: a &amp; b" in svg and "<org>" not in svg
    assert svg.startswith("<svg ") and 'width="100"' in svg
    with pytest.raises(jinja2.UndefinedError, match="'right' is undefined"):
        templates.template("badge.svg.j2").render(left=40, color="#007ec6", label="x", message="y")
