"""Metrics of the LogiCoL ablation and the LORE experiment, kept apart from the harness.

Why a module of its own: the numbers in the acceptance criteria of issue 5 come from here,
so each one is small, pure (numpy and plain Python) and tested against a brute-force
computation.

- :func:`retrieval_metrics`: ``R@20``, ``R@100`` and the negation ``violation_rate``,
  delegated to :func:`logic_rag.evals.quest.metrics.evaluate_run` (ir-measures recall and
  LogiCoL's violation: ``AvgRank(excluded) < AvgRank(gold)``, see
  :mod:`logic_rag.evals.quest.violation`), so the experiment reports exactly what
  ``logic-rag eval quest`` reports.
- :func:`avg_group_sim`: how close the encoder puts the query embeddings of one logical
  group. Shen et al. 2025 ("LogiCoL: Logically-Informed Contrastive Learning for Set-based
  Dense Retrieval", EMNLP 2025, arXiv:2505.19588) report an AvgGroupSim; we could not find
  its exact formula in the sources reachable here (paper pages and the authors' repository
  yanzhen4/LogiCoL were searched), so we use the definition the project brief prescribes
  for that case: the mean cosine similarity between query embeddings of queries in the same
  logical group minus the mean cosine of pairs of queries from different groups (the
  "random pair" baseline, taken exhaustively rather than sampled so the number is
  deterministic). Within-group similarity is a macro mean over groups (each group's mean
  over its unordered pairs), so large groups do not dominate. Lower means the encoder
  separates sibling queries (A AND B vs. A NOT B) more, which is what LogiCoL aims for;
  the baseline subtraction removes the overall anisotropy of the embedding space.
- :func:`set_recall_at_k` / :func:`mean_set_recall_at_k`: LORE's evaluation (Zhang et
  al.): the share of a query's positives, or of its distractors (N1, documents matching
  some but not all constraints), that appear in its top ``k``. Lower distractor recall is
  better; positive recall should not fall.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

import numpy as np

__all__ = [
    "ABLATION_KS",
    "retrieval_metrics",
    "avg_group_sim",
    "set_recall_at_k",
    "mean_set_recall_at_k",
    "relative_change",
]

#: Recall cut-offs of the ablation table (LogiCoL's headline R@20 and R@100).
ABLATION_KS: tuple[int, ...] = (20, 100)


def retrieval_metrics(
    run: Mapping[str, Sequence[tuple[str, float]]],
    queries: Sequence[Any],
    atom_sets: Mapping[str, Set[str]] | None,
    *,
    ks: Sequence[int] = ABLATION_KS,
    per_query: bool = False,
) -> dict[str, Any]:
    """``{"R@20", "R@100", "violation_rate", "pairwise_order", "n", "n_violation",
    "by_template"}`` of a run (and ``per_query`` rows with ``per_query=True``, for paired
    tests without searching again).

    ``queries`` are :class:`logic_rag.evals.quest.data.QuestQuery`; ``run`` maps query id to
    ``[(doc_id, score), ...]`` best first. ``violation_rate`` is ``None`` when no query has a
    negation whose excluded set is known (never shown as 0).
    """
    from logic_rag.evals.quest.metrics import evaluate_run

    result = evaluate_run(run, list(queries), atom_sets, ks=ks, mrecall_ks=(), set_cutoff=None)
    keep = [f"R@{k}" for k in ks] + ["violation_rate", "pairwise_order", "n"]
    out: dict[str, Any] = {name: result["all"].get(name) for name in keep}
    out["n_violation"] = sum(
        row["violation_rate"] is not None for row in result["per_query"].values()
    )
    out["by_template"] = {
        t: {name: agg.get(name) for name in keep}
        for t, agg in sorted(result["by_template"].items())
    }
    if per_query:
        out["per_query"] = {
            qid: {name: row.get(name) for name in keep if name != "n"}
            | {"template": row.get("template")}
            for qid, row in result["per_query"].items()
        }
    return out


def _unit_rows(embeddings: np.ndarray) -> np.ndarray:
    emb = np.asarray(embeddings, dtype=np.float64)
    if emb.ndim != 2:
        raise ValueError(f"embeddings must be a 2-d array (n, dim), got shape {emb.shape}")
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("an embedding is all zeros; cosine similarity is undefined")
    return emb / norms


def avg_group_sim(embeddings: np.ndarray, groups: Sequence[str | None]) -> dict[str, float | int]:
    """AvgGroupSim of query embeddings (definition in the module docstring).

    Args:
        embeddings: ``(n, dim)`` query embeddings (normalised here; any scale works).
        groups: the logical group of each query; ``None`` = ungrouped (left out of the
            within-group mean, but part of the different-group baseline).

    Returns ``{"avg_group_sim", "within", "between", "groups", "within_pairs",
    "between_pairs"}``; ``avg_group_sim = within - between``.
    """
    if len(groups) != len(embeddings):
        raise ValueError(f"{len(groups)} group labels for {len(embeddings)} embeddings")
    unit = _unit_rows(embeddings)
    sims = unit @ unit.T
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None:
            members.setdefault(str(g), []).append(i)
    per_group = []
    within_pairs = 0
    for ids in members.values():
        if len(ids) < 2:
            continue
        block = sims[np.ix_(ids, ids)]
        iu = np.triu_indices(len(ids), k=1)
        per_group.append(float(block[iu].mean()))
        within_pairs += len(iu[0])
    if not per_group:
        raise ValueError("no logical group has two queries; AvgGroupSim is undefined")
    # Different-group pairs: every unordered pair whose labels differ (an ungrouped query
    # differs from everything, itself excepted).
    labels = np.array([-1 if g is None else 0 for g in groups])
    codes = {g: k for k, g in enumerate(members)}
    for i, g in enumerate(groups):
        if g is not None:
            labels[i] = codes[str(g)]
    same = labels[:, None] == labels[None, :]
    same &= labels[:, None] >= 0
    upper = np.triu(np.ones_like(same, dtype=bool), k=1)
    between_mask = upper & ~same
    between_pairs = int(between_mask.sum())
    if between_pairs == 0:
        raise ValueError("all queries are in one group; no baseline pair for AvgGroupSim")
    within = float(np.mean(per_group))
    between = float(sims[between_mask].mean())
    return {
        "avg_group_sim": within - between,
        "within": within,
        "between": between,
        "groups": len(per_group),
        "within_pairs": within_pairs,
        "between_pairs": between_pairs,
    }


def set_recall_at_k(ranked: Sequence[str], targets: Set[str], k: int) -> float | None:
    """Share of ``targets`` among the first ``k`` of ``ranked``; ``None`` if no targets."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if not targets:
        return None
    top = set(ranked[:k])
    return len(top & set(targets)) / len(targets)


def mean_set_recall_at_k(
    rankings: Mapping[str, Sequence[str]],
    targets: Mapping[str, Iterable[str]],
    ks: Sequence[int] = (3, 5),
) -> dict[str, float | int | None]:
    """Macro mean of :func:`set_recall_at_k` over queries that have targets.

    Returns ``{"R@3": ..., "R@5": ..., "n": queries counted}``; a query without targets is
    skipped (it has no recall), one missing from ``rankings`` counts as an empty ranking.
    """
    out: dict[str, float | int | None] = {}
    counted = [q for q, t in targets.items() if set(t)]
    for k in ks:
        values = [set_recall_at_k(rankings.get(q, ()), set(targets[q]), k) for q in counted]
        present = [v for v in values if v is not None]
        out[f"R@{k}"] = sum(present) / len(present) if present else None
    out["n"] = len(counted)
    return out


def relative_change(new: float | None, old: float | None) -> float | None:
    """``(new - old) / old``; ``None`` when either is missing or ``old`` is 0."""
    if new is None or old is None or old == 0:
        return None
    return (new - old) / old
