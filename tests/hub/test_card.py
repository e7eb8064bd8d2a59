"""The model card's benchdb section (benchdb.hub.card.replace_section): put in place of the old one,
or appended, and the rest of the card left as it was."""

from __future__ import annotations

import pytest

from benchdb.hub.card import END, START, replace_section


def test_replace_section_changes_nothing_else():
    section = f"{START}\nnew\n{END}\n"
    assert replace_section("", section) == section
    assert replace_section("# Card\n\ntext\n", section) == f"# Card\n\ntext\n\n{START}\nnew\n{END}\n"
    assert replace_section(f"a\n{START}\nold\n{END}\nb\n", section) == f"a\n{START}\nnew\n{END}\nb\n"
    from benchdb.errors import BenchdbError

    with pytest.raises(BenchdbError, match="unmatched"):
        replace_section(f"a\n{START}\nold\n", section)
