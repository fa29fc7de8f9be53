"""Head-noun heuristics used by the rule decomposer."""

from __future__ import annotations

import pytest

from logic_rag.query.heads import head_noun, head_prefix, is_proper_name, item_kind, lower_first


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("set in Massachusetts", "tail"),
        ("Set in the Edo period", "tail"),
        ("endemic to Borneo", "tail"),
        ("Endemic flora of Australia", "full"),  # adjective, not a post-modifier
        ("Novels by Robert B. Parker", "full"),
        ("Odd-toed ungulates", "full"),  # plural head
        ("North American desert fauna", "full"),  # collective head
        ("Malaysia", "bare"),
        ("Holarctic", "bare"),
        ("LGBT-related romance", "bare"),
    ],
)
def test_item_kind(text, kind) -> None:
    assert item_kind(text) == kind


def test_head_noun_and_prefix() -> None:
    assert head_noun("Novels by Robert B. Parker") == "Novels"
    assert head_noun("Aquatic animals from South America") == "animals"
    assert head_noun("Brazilian fantasy films") == "films"
    assert head_prefix("Orchids of Indonesia") == "Orchids of"
    assert head_prefix("Films set in England") == "Films set in"
    assert head_prefix("Endemic flora of Australia") == "Endemic flora of"
    assert head_prefix("Brazilian fantasy films") is None
    assert head_prefix(None) is None


def test_proper_names_and_lowering() -> None:
    assert is_proper_name("South America")
    assert is_proper_name("Bosnia and Herzegovina")
    assert not is_proper_name("LGBT-related romance")
    assert lower_first("Set in the Edo period") == "set in the Edo period"
    assert lower_first("Japanese films") == "Japanese films"
