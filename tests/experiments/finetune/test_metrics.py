"""Experiment metrics against brute-force computations written independently."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from experiments.finetune.metrics import (
    avg_group_sim,
    mean_set_recall_at_k,
    relative_change,
    retrieval_metrics,
    set_recall_at_k,
)
from logic_rag.evals.quest.data import QuestQuery


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (math.sqrt(a @ a) * math.sqrt(b @ b)))


def _brute_group_sim(emb: np.ndarray, groups: list[str | None]) -> tuple[float, float]:
    by_group: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None:
            by_group.setdefault(g, []).append(i)
    group_means = []
    for ids in by_group.values():
        pairs = list(itertools.combinations(ids, 2))
        if pairs:
            group_means.append(sum(_cos(emb[i], emb[j]) for i, j in pairs) / len(pairs))
    between = [
        _cos(emb[i], emb[j])
        for i, j in itertools.combinations(range(len(groups)), 2)
        if groups[i] is None or groups[j] is None or groups[i] != groups[j]
    ]
    return sum(group_means) / len(group_means), sum(between) / len(between)


@pytest.mark.parametrize("seed", range(5))
def test_avg_group_sim_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 20))
    emb = rng.normal(size=(n, 7)) * rng.uniform(0.5, 3.0, size=(n, 1))
    labels = ["a", "b", "c", None]
    groups = [labels[int(rng.integers(0, 4))] for _ in range(n)]
    groups[0], groups[1] = "a", "a"  # at least one group with two members
    groups[2] = "b"
    within, between = _brute_group_sim(emb, groups)
    got = avg_group_sim(emb, groups)
    assert got["within"] == pytest.approx(within, abs=1e-9)
    assert got["between"] == pytest.approx(between, abs=1e-9)
    assert got["avg_group_sim"] == pytest.approx(within - between, abs=1e-9)


def test_avg_group_sim_sign_follows_clustering() -> None:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 16)) * 5
    emb = np.vstack([c + rng.normal(scale=0.1, size=(4, 16)) for c in centres])
    groups = [g for g in "abc" for _ in range(4)]
    assert avg_group_sim(emb, groups)["avg_group_sim"] > 0.3
    shuffled = list(groups)
    random.Random(1).shuffle(shuffled)
    assert (
        avg_group_sim(emb, shuffled)["avg_group_sim"] < avg_group_sim(emb, groups)["avg_group_sim"]
    )


def test_avg_group_sim_rejects_degenerate_input() -> None:
    emb = np.eye(3)
    with pytest.raises(ValueError, match="no logical group"):
        avg_group_sim(emb, ["a", "b", None])
    with pytest.raises(ValueError, match="one group"):
        avg_group_sim(emb, ["a", "a", "a"])
    with pytest.raises(ValueError, match="all zeros"):
        avg_group_sim(np.zeros((3, 2)), ["a", "a", "b"])
    with pytest.raises(ValueError, match="labels"):
        avg_group_sim(emb, ["a", "a"])


@pytest.mark.parametrize("seed", range(20))
def test_set_recall_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    ranked = rng.sample(docs, rng.randint(0, 30))
    targets = set(rng.sample(docs, rng.randint(1, 10)))
    k = rng.randint(1, 35)
    expected = sum(1 for d in targets if d in ranked and ranked.index(d) < k) / len(targets)
    assert set_recall_at_k(ranked, targets, k) == pytest.approx(expected)


def test_set_recall_edge_cases() -> None:
    assert set_recall_at_k(["a", "b"], set(), 3) is None
    with pytest.raises(ValueError):
        set_recall_at_k(["a"], {"a"}, 0)
    rankings = {"q1": ["a", "x", "b", "y"], "q2": ["z"]}
    targets = {"q1": ["a", "b"], "q2": ["y"], "q3": [], "q4": ["a"]}
    got = mean_set_recall_at_k(rankings, targets, ks=(1, 3))
    # q1: R@1 = 1/2, R@3 = 2/2; q2: 0, 0; q4 missing from rankings: 0, 0; q3 skipped.
    assert got == {"R@1": pytest.approx(0.5 / 3), "R@3": pytest.approx(1.0 / 3), "n": 3}


def test_relative_change() -> None:
    assert relative_change(0.3, 0.5) == pytest.approx(-0.4)
    assert relative_change(None, 0.5) is None
    assert relative_change(0.1, 0.0) is None


def test_retrieval_metrics_against_hand_computation() -> None:
    docs = [f"d{i}" for i in range(150)]
    rng = random.Random(3)
    atom_sets = {"A": set(docs[:40]), "B": set(docs[20:60])}
    q_not = QuestQuery(
        qid="0",
        query="A that are not B",
        docs=frozenset(atom_sets["A"] - atom_sets["B"]),
        template="_ that are not _",
        atoms=("A", "B"),
    )
    q_and = QuestQuery(
        qid="1",
        query="A that are also B",
        docs=frozenset(atom_sets["A"] & atom_sets["B"]),
        template="_ that are also _",
        atoms=("A", "B"),
    )
    run = {}
    for q in (q_not, q_and):
        ranked = list(docs)
        rng.shuffle(ranked)
        run[q.qid] = [(d, float(len(ranked) - i)) for i, d in enumerate(ranked[:120])]
    got = retrieval_metrics(run, [q_not, q_and], atom_sets)
    for k in (20, 100):
        per_query = [
            len({d for d, _ in run[q.qid][:k]} & q.docs) / len(q.docs) for q in (q_not, q_and)
        ]
        assert got[f"R@{k}"] == pytest.approx(sum(per_query) / 2)
    ranked = [d for d, _ in run["0"]]
    excluded = atom_sets["A"] & atom_sets["B"]

    def avg_rank(ds: set[str]) -> float:
        return sum(ranked.index(d) + 1 if d in ranked else len(ranked) + 1 for d in ds) / len(ds)

    assert got["violation_rate"] == (1.0 if avg_rank(excluded) < avg_rank(q_not.docs) else 0.0)
    assert got["n_violation"] == 1 and got["n"] == 2
    assert set(got["by_template"]) == {"_ that are not _", "_ that are also _"}
