from __future__ import annotations

import itertools
import random

import pytest

from logic_rag.query import And, Atom, Not, Or, atoms, drop_implied_conjuncts, truth
from logic_rag.query.redundancy import content_words


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (And((Atom("Dave Eggers books"), Atom("books"))), Atom("Dave Eggers books")),
        (And((Atom("Musical films"), Atom("1946 Indian musical films"))), Atom("1946 Indian musical films")),
        (And((Atom("Tahir Shah books"), Atom("Tahir Shah books"))), Atom("Tahir Shah books")),
        (
            And((Atom("Malayalam thriller films"), And((Atom("Remade films"), Atom("Films"))))),
            And((Atom("Malayalam thriller films"), Atom("Remade films"))),
        ),
        # a real conjunction stays
        (And((Atom("Russian novels"), Atom("1994 novels"))), And((Atom("Russian novels"), Atom("1994 novels")))),
        # negated and disjoint conjuncts are not touched
        (And((Atom("Comedy films"), Not(Atom("films")))), And((Atom("Comedy films"), Not(Atom("films"))))),
        (Or((Atom("Jazz albums"), Atom("albums"))), Or((Atom("Jazz albums"), Atom("albums")))),
        (Not(And((Atom("Orchids of Malaysia"), Atom("Orchids")))), Not(Atom("Orchids of Malaysia"))),
    ],
)  # fmt: skip
def test_examples(query, expected):
    assert drop_implied_conjuncts(query) == expected


def test_content_words():
    assert content_words("The Novels of 1994!") == {"novel", "1994"}
    assert content_words("Glass") == {"glass"}  # "ss" is not a plural


def _implications(query):
    """(narrow, wide) atom pairs whose words make narrow imply wide."""
    texts = sorted({a.text for a in atoms(query)})
    return [(a, b) for a in texts for b in texts if a != b and content_words(b) <= content_words(a)]


def _random_query(rng, depth=0):
    words = ["films", "novels", "Italian", "1970s", "crime", "books"]
    if depth >= 2 or rng.random() < 0.35:
        return Atom(" ".join(rng.sample(words, rng.randint(1, 3))))
    kind = rng.choice(["and", "and", "or", "not"])
    if kind == "not":
        return Not(_random_query(rng, depth + 1))
    args = tuple(_random_query(rng, depth + 1) for _ in range(rng.randint(2, 3)))
    return And(args) if kind == "and" else Or(args)


def test_same_answers_wherever_the_word_implications_hold():
    """Brute force: on every assignment where each narrower atom implies each wider one,
    the simplified query has the truth value of the original."""
    rng = random.Random(0)
    checked = 0
    for _ in range(400):
        query = _random_query(rng)
        simple = drop_implied_conjuncts(query)
        texts = sorted({a.text for a in atoms(query)})
        rules = _implications(query)
        for values in itertools.product([False, True], repeat=len(texts)):
            assignment = dict(zip(texts, values, strict=True))
            if any(assignment[a] and not assignment[b] for a, b in rules):
                continue
            assert truth(simple, assignment) == truth(query, assignment), (query, simple)
            checked += 1
    assert checked > 1000
