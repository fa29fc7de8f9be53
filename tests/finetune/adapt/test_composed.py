"""Composed training sets: set algebra against brute force, and texts the rules read back."""

from __future__ import annotations

import random

import pytest

from logic_rag.finetune.adapt.composed import (
    EXCLUSION_PHRASES,
    compose_queries,
    judged_universe,
    question_queries,
    reads_back,
    render_text,
    verdicts_from_labels,
)
from logic_rag.query.algebra import And, Atom, Not, atoms, truth
from logic_rag.query.rules import RuleDecomposer

ATOMS = [
    "Italian crime films",
    "1990s films",
    "Films shot in Rome",
    "Novels set in Paris",
    "French novels",
    "Orchids of Malaysia",
    "Birds of Guadeloupe",
]


def _random_labels(seed: int, docs: int = 40, judged_share: float = 0.7) -> list[dict]:
    """Each atom judged on a random share of the pages, with random scores."""
    rng = random.Random(seed)
    rows = []
    for atom in ATOMS:
        for d in range(docs):
            if rng.random() < judged_share:
                rows.append({"atom": atom, "doc": f"page {d}", "score": rng.random()})
    return rows


def _brute_force(logic, rows, threshold):
    """The pages judged for every atom of ``logic`` whose verdicts make it true, page by page."""
    verdict = {(r["atom"], r["doc"]): r["score"] >= threshold for r in rows}
    names = {a.text for a in atoms(logic)}
    pages = {r["doc"] for r in rows}
    out = set()
    for page in pages:
        if all((a, page) in verdict for a in names):
            if truth(logic, {a: verdict[(a, page)] for a in names}):
                out.add(page)
    return frozenset(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_composed_sets_equal_brute_force_over_the_judged_pages(seed):
    rows = _random_labels(seed)
    verdicts = verdicts_from_labels(rows, 0.6)
    queries, stats = compose_queries(verdicts, max_queries=500, seed=seed)
    shapes = {q.shape for q in queries}
    assert {"A", "A&B", "A|B", "A-B", "B-A", "A&B&C", "A&B-C", "A|B|C"} <= shapes
    for q in queries:
        assert q.gold == _brute_force(q.logic, rows, 0.6), q.text
        assert q.gold, "empty sets are not training queries"
    assert stats["queries"] == len(queries)
    assert sum(stats["by_shape"].values()) == len(queries)


def test_every_kept_text_reads_back_as_its_logic():
    rows = _random_labels(3)
    queries, stats = compose_queries(verdicts_from_labels(rows, 0.5), max_queries=500, seed=3)
    decomposer = RuleDecomposer()
    for q in queries:
        parsed = decomposer.decompose(q.text).query
        assert reads_back(q.text, q.logic, decomposer), (q.text, parsed)
    # Natural exclusion phrasings are used, not only QUEST's "that are not".
    assert {q.phrasing for q in queries if q.shape in ("A-B", "B-A")} - {"quest"}


def test_a_text_the_rules_misread_is_dropped_not_kept():
    """A decomposer that reads every text as one atom rejects every composed text."""

    class OneAtom:
        def decompose(self, text):
            from logic_rag.query.decompose import Decomposition

            return Decomposition(Atom(text), 1.0, "stub")

    rows = _random_labels(4)
    queries, stats = compose_queries(
        verdicts_from_labels(rows, 0.5), max_queries=500, seed=4, decomposer=OneAtom()
    )
    assert {q.shape for q in queries} == {"A"}
    assert stats["dropped_unreadable"] > 0


def test_unjudged_pages_never_enter_a_difference():
    # "page 1" is a member of A but was never judged for B: A - B must not claim it.
    rows = [
        {"atom": "Italian crime films", "doc": "page 0", "score": 0.9},
        {"atom": "Italian crime films", "doc": "page 1", "score": 0.9},
        {"atom": "Italian crime films", "doc": "page 2", "score": 0.9},
        {"atom": "1990s films", "doc": "page 0", "score": 0.9},
        {"atom": "1990s films", "doc": "page 2", "score": 0.1},
    ]
    verdicts = verdicts_from_labels(rows, 0.5)
    assert judged_universe(verdicts, ["Italian crime films", "1990s films"]) == {
        "page 0",
        "page 2",
    }
    queries, _ = compose_queries(verdicts, max_queries=50)
    diff = [
        q
        for q in queries
        if q.logic == And((Atom("Italian crime films"), Not(Atom("1990s films"))))
    ]
    assert [q.gold for q in diff] == [frozenset({"page 2"})]


def test_exclusion_phrasings_render_and_read_back():
    logic = And((Atom("Novels set in Paris"), Not(Atom("French novels"))))
    for phrasing in ("quest", *EXCLUSION_PHRASES):
        text = render_text("_ that are not _", ["Novels set in Paris", "French novels"], phrasing)
        assert reads_back(text, logic, RuleDecomposer()), text


QUESTIONS = [
    "Italian crime films that are also 1990s films",
    "Novels set in Paris but not French novels",
    "Orchids of Malaysia or Birds of Guadeloupe",
    "Films shot in Rome",
    "Italian crime films that are also Films shot in Rome but not 1990s films",
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_question_sets_equal_brute_force_over_the_judged_pages(seed):
    """Each question's set is what its own logic gives, page by page, over the pages judged
    for all its atoms; every other judged page is a known negative (``universe``)."""
    rows = _random_labels(seed)
    verdicts = verdicts_from_labels(rows, 0.6)
    queries, stats = question_queries(QUESTIONS, verdicts, min_size=0)
    assert stats == {"questions": len(QUESTIONS), "unlabelled": 0, "dropped_size": 0}
    decomposer = RuleDecomposer()
    for text, q in zip(QUESTIONS, queries, strict=True):
        assert q.text == text and q.shape == "Q"
        assert q.logic == decomposer.decompose(text).query
        assert q.gold == _brute_force(q.logic, rows, 0.6), text
        assert q.universe == judged_universe(verdicts, q.atoms)
        assert q.gold <= q.universe


def test_questions_with_an_unlabelled_atom_or_an_empty_set_are_dropped_and_counted():
    rows = [
        {"atom": "Italian crime films", "doc": "page 0", "score": 0.9},
        {"atom": "1990s films", "doc": "page 0", "score": 0.1},
    ]
    verdicts = verdicts_from_labels(rows, 0.5)
    queries, stats = question_queries(
        [
            "Italian crime films that are also 1990s films",  # empty set
            "italian  CRIME films",  # the atom's spelling, case and spaces aside
            "Novels set in Paris",  # never labelled
        ],
        verdicts,
    )
    assert [q.text for q in queries] == ["italian  CRIME films"]
    assert queries[0].atoms == ("Italian crime films",)
    assert stats == {"questions": 1, "unlabelled": 1, "dropped_size": 1}


def test_training_set_hard_negatives_are_the_judged_non_members():
    from logic_rag.corpus import Document
    from logic_rag.finetune.adapt.training import training_set

    rows = _random_labels(5, docs=12)
    docs = [Document(id=f"page {d}", text=f"text {d}") for d in range(12)]
    verdicts = verdicts_from_labels(rows, 0.5)
    queries, _ = question_queries(QUESTIONS, verdicts, min_size=1)
    assert queries
    plain = training_set(docs, rows, queries)
    assert all(q.hard_negatives == () for q in plain.queries)
    ts = training_set(docs, rows, queries, hard_negatives=True)
    for q, composed in zip(ts.queries, queries, strict=True):
        assert set(q.hard_negatives) == composed.universe - composed.gold
        assert not set(q.hard_negatives) & set(q.gold)
