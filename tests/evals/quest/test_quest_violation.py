"""LogiCoL negation violation: excluded sets and average ranks vs brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.evals.quest import QuestQuery, excluded_docs, negation_violation, pairwise_order

DOCS = [f"d{i}" for i in range(12)]
NOT = "_ that are not _"
BUT_NOT = "_ that are also _ but not _"


def q(template, atoms, docs, qid="q") -> QuestQuery:
    return QuestQuery(
        qid=qid,
        query="",
        docs=frozenset(docs),
        template=template,
        atoms=None if atoms is None else tuple(atoms),
    )


def test_excluded_for_both_negation_templates() -> None:
    atom_sets = {"A": {"1", "2", "3", "4"}, "B": {"2", "3", "9"}, "C": {"3", "4", "9"}}
    # "A that are not B": gold = A - B, excluded = A ∩ B
    assert excluded_docs(q(NOT, ["A", "B"], {"1", "4"}), atom_sets) == {"2", "3"}
    # "A that are also B but not C": gold = A ∩ B - C, excluded = A ∩ B ∩ C
    assert excluded_docs(q(BUT_NOT, ["A", "B", "C"], {"2"}), atom_sets) == {"3"}


def test_not_applicable_cases() -> None:
    atom_sets = {"A": {"1", "2"}, "B": {"2"}}
    assert excluded_docs(q(NOT, ["A", "B"], {"1"}), None) is None
    assert excluded_docs(q("_ or _", ["A", "B"], {"1", "2"}), atom_sets) is None
    assert excluded_docs(q(NOT, None, {"1"}), atom_sets) is None
    assert excluded_docs(q(NOT, ["A", "Z"], {"1"}), atom_sets) is None  # unknown atom
    assert excluded_docs(q(NOT, ["A"], {"1"}), atom_sets) is None  # wrong arity
    assert excluded_docs(q(NOT, ["A", "B"], {"1"}), {"A": {"1"}, "B": {"3"}}) is None  # empty
    # excluded documents that are also gold (annotation noise) are dropped
    assert excluded_docs(q(NOT, ["A", "B"], {"1", "2"}), atom_sets) is None


def test_hand_worked_violation() -> None:
    # gold ranks 2, 4 -> 3.0; excluded ranks 1, 3 -> 2.0 < 3.0: violation
    assert negation_violation(["e1", "g1", "e2", "g2"], {"g1", "g2"}, {"e1", "e2"}) == (
        True,
        3.0,
        2.0,
    )
    # unretrieved documents rank depth + 1 = 2: gold (1 + 2) / 2 = 1.5, excluded 2.0
    assert negation_violation(["g1"], {"g1", "g2"}, {"e1"}) == (False, 1.5, 2.0)
    # nothing retrieved: equal averages are not a violation
    assert negation_violation([], {"g"}, {"e"}) == (False, 1.0, 1.0)


def test_hand_worked_pairwise_order() -> None:
    # pairs (g1 @2, e1 @1) wrong, (g1, e2 @3) right, (g2 @4, e1) wrong, (g2, e2) wrong
    assert pairwise_order(["e1", "g1", "e2", "g2"], {"g1", "g2"}, {"e1", "e2"}) == 0.25
    # the averages can disagree with the pairs: one gold document far down outweighs the rest
    gold = {"g1", "g2", "g3", "g4"}
    ranked = ["g1", "g2", "g3", "e1", *(f"x{i}" for i in range(7)), "g4"]  # g4 at rank 12
    assert negation_violation(ranked, gold, {"e1"}) == (True, 4.5, 4.0)
    assert pairwise_order(ranked, gold, {"e1"}) == 0.75
    assert pairwise_order(["g1", "e1"], {"g1"}, {"e1"}) == 1.0
    # both unretrieved: a tie counts one half
    assert pairwise_order(["x"], {"g"}, {"e"}) == 0.5
    with pytest.raises(ValueError, match="non-empty"):
        pairwise_order(["g"], {"g"}, set())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(DOCS), unique=True, max_size=12),
    st.lists(st.sets(st.sampled_from(DOCS)), min_size=2, max_size=3),
    st.sets(st.sampled_from(DOCS), min_size=1),
)
def test_against_brute_force(ranked, atom_docs, gold) -> None:
    names = [f"atom{i}" for i in range(len(atom_docs))]
    template = NOT if len(names) == 2 else BUT_NOT
    atom_sets = dict(zip(names, atom_docs, strict=True))
    query = q(template, names, gold)
    expected_excluded = {d for d in DOCS if all(d in s for s in atom_docs) and d not in gold}
    got = excluded_docs(query, atom_sets)
    assert got == (expected_excluded or None)
    if got is None:
        return

    def rank(doc):
        for i, d in enumerate(ranked):
            if d == doc:
                return i + 1
        return len(ranked) + 1

    avg_g = sum(rank(d) for d in gold) / len(gold)
    avg_e = sum(rank(d) for d in got) / len(got)
    violated, g, e = negation_violation(ranked, gold, got)
    assert (g, e) == (pytest.approx(avg_g), pytest.approx(avg_e))
    assert violated == (avg_e < avg_g)
    pairs = [(rank(a), rank(b)) for a in gold for b in got]
    slow = sum(1.0 if ra < rb else 0.5 if ra == rb else 0.0 for ra, rb in pairs) / len(pairs)
    assert pairwise_order(ranked, gold, got) == pytest.approx(slow)
