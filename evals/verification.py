"""How well a verifier separates an atom's members from pages known to lie outside it.

For (atom, page) pairs with known membership (:func:`~logic_rag.finetune.verifier.pairs.quest_pairs`
on a QUEST split), the ROC AUC of the verifier's P(page satisfies atom), positives against
each kind of negative, pooled over atoms (``auc``: the probabilities must be comparable
across atoms, as the soft logic needs) and averaged within atoms (``macro_auc``):
``excluded`` (gold pages of queries that negate the atom: the
hardest, they share the query's other constraints), ``sibling`` (pages of a union's other
branch), ``known`` (both), ``random`` (same-domain pages). A 95% interval comes from a
bootstrap over atoms (pairs of one atom are not independent).

``python -m logic_rag.evals.verification --index DIR --queries dev.jsonl --verifier SPEC``
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["roc_auc", "verifier_scores", "verification_auc", "main"]


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """P(positive scores above negative), ties counted half (Mann-Whitney U / n₁n₂)."""
    pos = np.asarray(positives, dtype=np.float64)
    neg = np.asarray(negatives, dtype=np.float64)
    if not len(pos) or not len(neg):
        return None
    scores = np.concatenate([pos, neg])
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):  # average ranks over ties
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    u = ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2.0
    return float(u / (len(pos) * len(neg)))


def verifier_scores(verifier: Any, pairs: Sequence[Any], resources: Any) -> np.ndarray:
    """P for every pair, checked in one batched verifier call (grouped by atom)."""
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.verifiers.base import CheckRequest

    rows = resources.rows_by_id()
    by_atom: dict[str, list[int]] = defaultdict(list)
    for i, pair in enumerate(pairs):
        by_atom[pair.atom].append(i)
    atoms = sorted(by_atom)
    requests = [
        CheckRequest((a,), np.array([rows[pairs[i].title] for i in by_atom[a]], np.int64))
        for a in atoms
    ]
    ctx = SearchContext(resources)
    verifier.prepare(atoms, ctx)
    ctx.run_wanted()
    out = np.empty(len(pairs))
    for atom, checked in zip(atoms, verifier.check(requests, ctx), strict=True):
        out[by_atom[atom]] = checked.probs[0]
    return out


def verification_auc(
    pairs: Sequence[Any], scores: np.ndarray, *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """AUC (and a 95% bootstrap interval over atoms) of positives vs each negative kind."""
    atoms = sorted({p.atom for p in pairs})
    index = {a: i for i, a in enumerate(atoms)}
    by_kind: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for pair, score in zip(pairs, scores.tolist(), strict=True):
        by_kind[pair.kind].append((index[pair.atom], score))
    groups = {
        "excluded": ["excluded"],
        "sibling": ["sibling"],
        "known": ["excluded", "sibling"],
        "random": ["random"],
    }
    rng = np.random.default_rng(seed)
    result: dict[str, Any] = {"pairs": len(pairs), "atoms": len(atoms)}
    pos = by_kind.get("positive", [])
    for name, kinds in groups.items():
        neg = [x for k in kinds for x in by_kind.get(k, [])]
        auc = roc_auc([s for _, s in pos], [s for _, s in neg])
        entry: dict[str, Any] = {"auc": auc, "negatives": len(neg)}
        per_atom = [
            roc_auc([s for a, s in pos if a == i], [s for a, s in neg if a == i])
            for i in sorted({a for a, _ in neg} & {a for a, _ in pos})
        ]
        per_atom = [v for v in per_atom if v is not None]
        entry["macro_auc"] = float(np.mean(per_atom)) if per_atom else None
        entry["macro_atoms"] = len(per_atom)
        if auc is not None and bootstrap:
            pos_by, neg_by = defaultdict(list), defaultdict(list)
            for a, s in pos:
                pos_by[a].append(s)
            for a, s in neg:
                neg_by[a].append(s)
            draws = []
            for _ in range(bootstrap):
                sample = rng.integers(0, len(atoms), len(atoms))
                value = roc_auc(
                    [s for a in sample for s in pos_by[a]], [s for a in sample for s in neg_by[a]]
                )
                if value is not None:
                    draws.append(value)
            if draws:
                entry["ci95"] = [
                    float(np.percentile(draws, 2.5)),
                    float(np.percentile(draws, 97.5)),
                ]
        result[name] = entry
    result["positives"] = len(pos)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    from logic_rag.evals.quest.split import read_records
    from logic_rag.finetune.verifier.pairs import quest_pairs
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.spec import make_verifier

    parser = argparse.ArgumentParser(
        prog="python -m logic_rag.evals.verification", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--index", required=True, help="index folder over the QUEST documents")
    parser.add_argument("--queries", required=True, help="QUEST JSONL (e.g. your dev split)")
    parser.add_argument("--verifier", action="append", required=True, help="verifier spec")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    retriever = LogicRetriever.load(args.index)
    documents = {d.id: d.content for d in retriever.documents}
    pairs = quest_pairs(read_records(args.queries), documents)
    results = {}
    for spec in args.verifier:
        scores = verifier_scores(make_verifier(spec), pairs, retriever.resources)
        results[spec] = verification_auc(pairs, scores)
        row = results[spec]
        print(
            f"{spec:<40} "
            + "  ".join(
                f"{k} {row[k]['auc']:.3f}"
                for k in ("excluded", "sibling", "known", "random")
                if row[k]["auc"] is not None
            )
        )
    if args.out:
        from logic_rag.atomic import atomic_write_json

        atomic_write_json(args.out, results)
    else:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
