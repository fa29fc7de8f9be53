"""Verification AUC against brute force, and the (atom, page) pairs QUEST implies."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.evals.verification import roc_auc, verification_auc
from logic_rag.finetune.verifier.pairs import VerifierPair, quest_pairs


def _brute(pos, neg):
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=12),
    st.lists(st.integers(0, 5), min_size=1, max_size=12),
)
def test_auc_equals_the_pair_count(pos, neg):
    assert roc_auc(pos, neg) == _brute(pos, neg)


def test_auc_of_nothing_is_none():
    assert roc_auc([], [1.0]) is None


RECORDS = [
    {
        "docs": ["P1", "P2"],
        "original_query": "<mark>Italian films</mark> that are not <mark>Crime films</mark>",
        "metadata": {"template": "_ that are not _", "domain": "films"},
    },
    {
        "docs": ["P3", "P4"],
        "original_query": "<mark>1994 films</mark> or <mark>Westerns</mark>",
        "metadata": {
            "template": "_ or _",
            "domain": "films",
            "attributions": {
                "P3": [{"films from 1994": "P3 is a 1994 drama."}],
                "P4": [{"a film": "something vague"}],
            },
        },
    },
    {
        "docs": ["P5"],
        "original_query": "<mark>Westerns</mark> that are also <mark>1994 films</mark>",
        "metadata": {"template": "_ that are also _", "domain": "films"},
    },
]
DOCS = {f"P{i}": f"page {i}" for i in range(1, 10)}


def test_pairs_follow_each_templates_logic():
    pairs = quest_pairs(RECORDS, DOCS, random_per_positive=1.0, seed=1)
    kinds = {(p.atom, p.title): p.kind for p in pairs}
    assert kinds[("Italian films", "P1")] == "positive"
    assert kinds[("Crime films", "P2")] == "excluded"
    assert kinds[("1994 films", "P3")] == "positive"  # attribution names 1994 only
    assert kinds[("Westerns", "P3")] == "sibling"
    assert ("1994 films", "P4") not in kinds  # a vague attribution assigns nothing
    assert kinds[("Westerns", "P5")] == kinds[("1994 films", "P5")] == "positive"
    randoms = [p for p in pairs if p.kind == "random"]
    members = {p.title for p in pairs if p.kind == "positive"}
    assert randoms and not {p.title for p in randoms} & members


def test_verification_auc_by_kind():
    pairs = [
        VerifierPair("a", "x", 1.0, "positive"),
        VerifierPair("a", "y", 0.0, "excluded"),
        VerifierPair("b", "z", 1.0, "positive"),
        VerifierPair("b", "w", 0.0, "random"),
    ]
    result = verification_auc(pairs, np.array([0.9, 0.2, 0.1, 0.5]), bootstrap=50)
    # Pooled: both atoms' positives against every negative of the kind.
    assert result["excluded"]["auc"] == 0.5  # 0.9 > 0.2 but 0.1 < 0.2
    assert result["random"]["auc"] == 0.5  # 0.9 > 0.5 but 0.1 < 0.5
    # Within atoms: a's positive beats a's excluded page, b's loses to b's random one.
    assert result["excluded"]["macro_auc"] == 1.0
    assert result["random"]["macro_auc"] == 0.0
    assert result["sibling"]["auc"] is None
    assert 0.0 <= result["known"]["ci95"][0] <= result["known"]["ci95"][1] <= 1.0
