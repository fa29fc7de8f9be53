"""Relative-clause negation reads as a noun phrase on the head noun (issue 52).

"desserts that do not contain chocolate" once read as ``desserts NOT contain chocolate
desserts`` and "films that do not feature dogs" as ``films NOT feature dogs``. The excluded
atom is now a readable noun phrase holding the head noun once, like "salads without cheese"
(``NOT salads with cheese``) and "cars that are not red" (``NOT red cars``).
"""

from __future__ import annotations

import pytest

from logic_rag.query.algebra import And, Atom, Not, Or
from logic_rag.query.rules import RuleDecomposer

RULES = RuleDecomposer()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("desserts that do not contain chocolate", ("desserts", "desserts that contain chocolate")),
        ("films that do not feature dogs", ("films", "films that feature dogs")),
        (
            "desserts which don't contain chocolate",
            ("desserts", "desserts which contain chocolate"),
        ),
        ("desserts that don’t contain chocolate", ("desserts", "desserts that contain chocolate")),
        ("people who do not smoke", ("people", "people who smoke")),
        ("birds that do not fly", ("birds", "birds that fly")),
        ("a film that does not feature dogs", ("a film", "film that features dogs")),
        ("a dessert that doesn't contain nuts", ("a dessert", "dessert that contains nuts")),
        ("a plant that does not fly", ("a plant", "plant that flies")),
        ("a snake that does not have legs", ("a snake", "snake that has legs")),
        ("Italian films that do not feature dogs", ("Italian films", "films that feature dogs")),
        (
            "films set in Paris but do not feature dogs",
            ("films set in Paris", "films that feature dogs"),
        ),
        (
            "Books about military personal that don't have murder in them",
            ("Books about military personal", "Books that have murder in them"),
        ),
        ("salads without cheese", ("salads", "salads with cheese")),
        ("cars that are not red", ("cars", "red cars")),
        (
            "Indian sport films that are not about cricket",
            ("Indian sport films", "films about cricket"),
        ),
        ("films that aren't comedies", ("films", "comedies")),
    ],
)
def test_the_excluded_atom_is_a_noun_phrase(text: str, expected: tuple[str, str]) -> None:
    positive, excluded = expected
    assert RULES.decompose(text).query == And((Atom(positive), Not(Atom(excluded))))


@pytest.mark.parametrize(
    "text",
    [
        "desserts that do not contain chocolate",
        "desserts which don't contain chocolate",
        "films that do not feature dogs",
        "birds that do not fly",
    ],
)
def test_the_head_noun_appears_once(text: str) -> None:
    (_, negation) = RULES.decompose(text).query.args
    words = negation.arg.text.split()
    assert words.count(text.split()[0]) == 1, negation


def test_the_verb_carries_over_a_list() -> None:
    query = RULES.decompose("desserts that do not contain nuts or chocolate").query
    assert query == And(
        (
            Atom("desserts"),
            Not(Or((Atom("desserts that contain nuts"), Atom("desserts that contain chocolate")))),
        )
    )


def test_the_verb_phrase_is_a_noun_phrase_without_head_sharing() -> None:
    rules = RuleDecomposer(share_heads=False)
    query = rules.decompose("desserts that do not contain chocolate").query
    assert query == And((Atom("desserts"), Not(Atom("desserts that contain chocolate"))))


def test_a_negated_relative_clause_still_reads_as_a_guess() -> None:
    """The head was borrowed: the confidence says so, but stays above auto's trust line."""
    from logic_rag.query.auto import RULES_TRUSTED

    confidence = RULES.decompose("films that do not feature dogs").confidence
    assert RULES_TRUSTED <= confidence < RULES.decompose("films and comedies").confidence
