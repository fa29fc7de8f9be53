"""Probe how much more the embedding evidence can give the logic, on a labelled split.

Why: on QUEST-attr the gain of ``rerank`` / ``verify`` over a strong encoder comes from
verification, and cheaper levers that use only the index's vectors should be ruled in or
out before paying for a model. This script re-scores the ``rerank`` candidates of every
query with variants that need no new model and prints R@20 (all / the two negation
templates) for each:

* ``negated-depth``: the negated atoms calibrated at another neighbour rank / temperature;
* ``contrast``: a negated atom's evidence minus ``beta`` times the positive atoms' (the
  words "superhero film" in "1990s superhero films that are not American superhero
  films" raise both atoms; the difference keeps what only the negated one says);
* ``prf``: each atom's vector moved towards the centroid of its top neighbours
  (pseudo-relevance feedback);
* ``learned``: a logistic regression over the candidates' signals (cosines, soft truth,
  per-polarity probabilities and evidence), 5-fold cross-validated by query.

Every variant uses whole-document evidence (no best sentence), so ``base`` here is the
``rerank`` formula on that evidence; ``package`` is the package's own ``rerank``. Run it
on the train split only (``python -m logic_rag.evals.quest.split`` makes it)::

    python experiments/embedding_probe.py --index runs/quest-gemma --queries runs/split/train.jsonl
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from logic_rag.candidates.dense import DenseCandidates
from logic_rag.compose.calibration import atom_thresholds, calibrate
from logic_rag.compose.soft_logic import soft_truth
from logic_rag.evals.quest.data import load_quest_queries
from logic_rag.logic_retriever import LogicRetriever
from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.ranking import signal
from logic_rag.pipeline.state import QueryState, SearchBatch
from logic_rag.query.algebra import LogicalQuery, positive_part
from logic_rag.strategy_settings import EvidenceSettings, RerankSettings
from logic_rag.verifiers.base import Verify

NEGATION = ("_ that are not _", "_ that are also _ but not _")


@dataclass
class Probe:
    """One query's ``rerank`` candidates and the signals the variants re-score."""

    template: str
    logic: LogicalQuery
    atoms: list[str]
    negated: np.ndarray  # (atoms,) bool
    gold: np.ndarray  # (candidates,) bool
    n_gold: int
    cosine: np.ndarray
    positive_cosine: np.ndarray
    probs: np.ndarray  # the package's calibrated probabilities (document + sentence)
    corpus: np.ndarray  # (atoms, corpus) whole-document atom similarities
    rows: np.ndarray  # candidate rows

    def recall(self, score: np.ndarray, k: int = 20) -> float:
        top = np.argsort(-score, kind="stable")[:k]
        return float(self.gold[top].sum() / self.n_gold)


def collect(retriever: LogicRetriever, path: str, batch_size: int = 32) -> list[Probe]:
    queries = load_quest_queries(path)
    cfg = RerankSettings()
    pipeline = DenseCandidates(cfg.candidates) >> Verify(EvidenceSettings().verifier())
    docs = retriever.resources.doc_vectors()
    probes = []
    for start in range(0, len(queries), batch_size):
        chunk = queries[start : start + batch_size]
        plans = retriever.plan([q.query for q in chunk])
        batch = SearchBatch([QueryState(p) for p in plans], cfg.candidates)
        ctx = SearchContext(retriever.resources)
        pipeline(batch, ctx)
        for q, state in zip(chunk, batch, strict=True):
            atoms = [a.text for a in state.plan.atoms]
            negated = {a.text for a in state.plan.negated}
            ids = [retriever.documents[i].id for i in state.candidates]
            gold = set(q.docs)
            probes.append(
                Probe(
                    template=q.template,
                    logic=state.plan.logic,
                    atoms=atoms,
                    negated=np.array([a in negated for a in atoms]),
                    gold=np.array([d in gold for d in ids]),
                    n_gold=len(q.docs),
                    cosine=signal(state, "cosine", ctx),
                    positive_cosine=signal(state, "positive_cosine", ctx),
                    probs=state.probs,
                    corpus=ctx.vectors(atoms) @ docs.T,
                    rows=state.candidates,
                )
            )
    return probes


def _calibrated(corpus_scores: np.ndarray, rows: np.ndarray, rank: int, t: float) -> np.ndarray:
    """The package's calibration, with the whole corpus as the atom's neighbourhood."""
    threshold = atom_thresholds(-np.sort(-corpus_scores)[None, :], rank)
    return calibrate(corpus_scores[rows][None, :], threshold, t)[0]


def doc_probs(p: Probe, rank: int = 20, t: float = 0.1) -> np.ndarray:
    return np.stack([_calibrated(s, p.rows, rank, t) for s in p.corpus])


def rerank_score(p: Probe, probs: np.ndarray, logic: LogicalQuery | None = None) -> np.ndarray:
    """``rerank``'s score (default :class:`RerankSettings` weights) over ``logic`` (the
    query's)."""
    cfg = RerankSettings()
    truth = soft_truth(logic or p.logic, {a: probs[i] for i, a in enumerate(p.atoms)})
    prior = (1 - cfg.positive_prior) * p.cosine + cfg.positive_prior * p.positive_cosine
    return prior + cfg.truth_weight * truth


def positive_only_score(p: Probe) -> np.ndarray:
    """``rerank`` with the negations dropped from the logic (what the negation adds)."""
    return rerank_score(p, p.probs, positive_part(p.logic))


def summary(probes: list[Probe], scores: list[np.ndarray]) -> tuple[float, float]:
    recalls = [p.recall(s) for p, s in zip(probes, scores, strict=True)]
    neg = [r for p, r in zip(probes, recalls, strict=True) if p.template in NEGATION]
    return float(np.mean(recalls)), float(np.mean(neg))


def negated_depth(p: Probe, rank: int, t: float) -> np.ndarray:
    probs = doc_probs(p)
    for i in np.flatnonzero(p.negated):
        probs[i] = _calibrated(p.corpus[i], p.rows, rank, t)
    return probs


def contrast(p: Probe, beta: float, rank: int, t: float) -> np.ndarray:
    probs = doc_probs(p)
    if p.negated.all() or not p.negated.any():
        return probs
    positive = p.corpus[~p.negated].mean(0)
    for i in np.flatnonzero(p.negated):
        probs[i] = _calibrated(p.corpus[i] - beta * positive, p.rows, rank, t)
    return probs


def prf(p: Probe, docs: np.ndarray, k: int, weight: float) -> np.ndarray:
    out = []
    for s in p.corpus:
        centroid = docs[np.argsort(-s)[:k]].mean(0)
        moved = (1 - weight) * s + weight * docs @ (centroid / np.linalg.norm(centroid))
        out.append(_calibrated(moved, p.rows, 20, 0.1))
    return np.stack(out)


def features(p: Probe) -> np.ndarray:
    n = len(p.rows)
    truth = soft_truth(p.logic, {a: p.probs[i] for i, a in enumerate(p.atoms)})
    pos = p.probs[~p.negated] if (~p.negated).any() else np.ones((1, n))
    neg = p.probs[p.negated] if p.negated.any() else np.zeros((1, n))
    evidence = p.corpus[:, p.rows]
    pos_e = evidence[~p.negated] if (~p.negated).any() else np.zeros((1, n))
    neg_e = evidence[p.negated] if p.negated.any() else np.zeros((1, n))

    def z(x: np.ndarray) -> np.ndarray:
        return (x - x.mean()) / (x.std() + 1e-6)

    return np.stack(
        [p.cosine, p.positive_cosine, truth, pos.min(0), pos.mean(0), neg.max(0),
         z(p.cosine), z(p.positive_cosine), z(pos_e.mean(0)), z(neg_e.max(0)), z(pos_e.min(0))],
        axis=1,
    )  # fmt: skip


def learned(probes: list[Probe], folds: int = 5, seed: int = 0) -> list[np.ndarray]:
    """Out-of-fold scores of one logistic regression per group (negation or not)."""
    from sklearn.linear_model import LogisticRegression

    feats = [features(p) for p in probes]
    order = np.random.default_rng(seed).permutation(len(probes))
    scores: list[np.ndarray | None] = [None] * len(probes)
    for f in range(folds):
        held = set(order[f::folds].tolist())
        for group in (True, False):
            fit = [i for i in range(len(probes)) if i not in held]
            fit = [i for i in fit if (probes[i].template in NEGATION) == group]
            x = np.concatenate([feats[i] for i in fit])
            y = np.concatenate([probes[i].gold for i in fit])
            model = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
            for i in held:
                if (probes[i].template in NEGATION) == group:
                    scores[i] = model.decision_function(feats[i])
    assert all(s is not None for s in scores)  # every query is held out once
    return scores  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True, help="an index folder (logic-rag index)")
    parser.add_argument("--queries", required=True, help="QUEST-format queries (train split)")
    args = parser.parse_args()
    retriever = LogicRetriever.load(args.index)
    probes = collect(retriever, args.queries)
    docs = retriever.resources.doc_vectors()
    print(f"{len(probes)} queries, {sum(p.template in NEGATION for p in probes)} negation")

    def show(name: str, probs_of: Callable[[Probe], np.ndarray]) -> None:
        score = summary(probes, [rerank_score(p, probs_of(p)) for p in probes])
        print(f"{name:<40} R@20 all {score[0]:.3f}  negation {score[1]:.3f}")

    for template in NEGATION:
        group = [p for p in probes if p.template == template]
        held = np.mean([p.gold.sum() / p.n_gold for p in group])
        full = [rerank_score(p, p.probs) for p in group]
        part = [positive_only_score(p) for p in group]
        print(
            f"{template}: {len(group)} queries; the 100 candidates hold {held:.3f} of the gold;"
            f" R@20 {summary(group, full)[0]:.3f}, positive part alone {summary(group, part)[0]:.3f}"
        )
    show("package (document + sentence evidence)", lambda p: p.probs)
    show("base (document evidence)", doc_probs)
    for rank in (10, 40, 80, 160):
        for t in (0.05, 0.1):
            show(f"negated-depth rank={rank} T={t}", lambda p, r=rank, t=t: negated_depth(p, r, t))
    for beta in (0.25, 0.5, 0.75, 1.0):
        for rank in (10, 20, 40):
            show(
                f"contrast beta={beta} rank={rank}",
                lambda p, b=beta, r=rank: contrast(p, b, r, 0.1),
            )
    for k in (5, 10, 20):
        for weight in (0.25, 0.5):
            show(f"prf k={k} weight={weight}", lambda p, k=k, w=weight: prf(p, docs, k, w))
    # The learned combiner's features come from the package evidence: compare with "package".
    ltr = summary(probes, learned(probes))
    print(
        f"{'learned combiner (5-fold by query)':<40} R@20 all {ltr[0]:.3f}  negation {ltr[1]:.3f}"
    )


if __name__ == "__main__":
    main()
