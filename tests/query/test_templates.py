"""QUEST templates: construction, recognition, round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.query.algebra import And, Atom, Not, Or, Relation, atoms, canonical, relation
from logic_rag.query.templates import TEMPLATES, from_template, template_arity, to_template

A, B, C = Atom("A"), Atom("B"), Atom("C")


def test_seven_templates_in_paper_order() -> None:
    assert TEMPLATES == (
        "_",
        "_ or _",
        "_ or _ or _",
        "_ that are also _",
        "_ that are also both _ and _",
        "_ that are not _",
        "_ that are also _ but not _",
    )
    assert [template_arity(t) for t in TEMPLATES] == [1, 2, 3, 2, 3, 2, 3]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("_", A),
        ("_ or _", Or((A, B))),
        ("_ or _ or _", Or((A, B, C))),
        ("_ that are also _", And((A, B))),
        ("_ that are also both _ and _", And((A, B, C))),
        ("_ that are not _", And((A, Not(B)))),
        ("_ that are also _ but not _", And((A, B, Not(C)))),
    ],
)
def test_from_template_semantics(template, expected) -> None:
    q = from_template(template, ["A", "B", "C"][: template_arity(template)])
    assert relation(q, expected) is Relation.EQUAL
    assert to_template(expected) == template


texts = st.text(alphabet="abcdefgh ", min_size=1, max_size=8).filter(lambda s: s.strip())


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(TEMPLATES), st.lists(texts, min_size=3, max_size=3, unique=True))
def test_template_round_trip(template, names) -> None:
    names = names[: template_arity(template)]
    q = from_template(template, names)
    assert to_template(q) == template
    assert to_template(canonical(q)) == template
    assert [a.text for a in atoms(q)] == names


def test_from_template_keeps_slot_order() -> None:
    q = from_template("_ that are also _ but not _", ["z", "a", "m"])
    assert q == And((Atom("z"), Atom("a"), Not(Atom("m"))))


def test_from_template_errors() -> None:
    with pytest.raises(ValueError, match="unknown QUEST template"):
        from_template("_ and _", ["A", "B"])
    with pytest.raises(ValueError, match="2 slot"):
        from_template("_ or _", ["A"])
    with pytest.raises(TypeError, match="sequence of strings"):
        from_template("_", "A")


@pytest.mark.parametrize(
    "q",
    [
        Not(A),
        Or((A, Not(B))),
        And((A, Or((B, C)))),
        And((Not(A), Not(B))),
        And((A, Not(B), Not(C))),
        Or(tuple(Atom(x) for x in "ABCD")),
        And(tuple(Atom(x) for x in "ABCD")),
    ],
)
def test_to_template_none_for_other_shapes(q) -> None:
    assert to_template(q) is None


def test_to_template_sees_through_canonical_form() -> None:
    assert to_template(And((Not(Not(A)), And((B,))))) == "_ that are also _"
    assert to_template(Or((A, Or((B, C))))) == "_ or _ or _"
    assert to_template(And((Not(B), A))) == "_ that are not _"
    assert to_template(And((A, A))) == "_"
