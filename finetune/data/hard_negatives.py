"""Hard negatives for set-retrieval training: known from the atoms' sets, and mined.

Why: in-batch negatives of QUEST queries are mostly pages of other domains, easy to push
away; what a logic-blind encoder gets wrong are the pages that match *part* of a query. For
``A but not B`` those are pages known to be in ``B`` (a negated atom's members are never
gold), for ``A that are also B`` the pages known to be in only some atoms. Both are read off
the atoms' known member sets (``atoms.jsonl``; on real QUEST these are partial, read from the
training queries' gold sets and attributions): every known member of any atom of the query
that is not in the query's gold set is a negative by the gold set's own definition, and a
hard one by construction.

:func:`mined_hard_negatives` adds near-misses of the base encoder with sentence-transformers'
:func:`~sentence_transformers.util.mine_hard_negatives`, minus every known positive of the
query (the library excludes only the row's own positive; a query has many). Its embeddings
can be kept in a folder keyed by the weights (:func:`mining_cache_folder`): the library keys
its own cache files by model *name*, so a fine-tuned model of the same name would read a
stale file from a shared folder. :func:`ranked_hard_negatives` takes the same near-misses from
any ranking, e.g. an index the caller has already embedded (the experiments' cached one).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence, Set
from dataclasses import replace
from pathlib import Path
from typing import Any

from logic_rag.query.algebra import atoms as query_atoms
from logic_rag.query.algebra import negated_atoms

from .examples import TrainingSet

__all__ = [
    "known_hard_negatives",
    "mined_hard_negatives",
    "mining_cache_folder",
    "ranked_hard_negatives",
    "with_hard_negatives",
]

log = logging.getLogger(__name__)


def known_hard_negatives(
    ts: TrainingSet, atom_sets: Mapping[str, Set[str]], *, limit: int = 32
) -> dict[str, list[str]]:
    """Query id -> known members of the query's atoms outside its gold set (at most ``limit``).

    Pages of negated atoms come first (they are wrong for certain), then pages that satisfy
    the most positive atoms; ties in title order, so the result is deterministic.
    """
    sets = {" ".join(a.split()): s for a, s in atom_sets.items()}
    out: dict[str, list[str]] = {}
    for q in ts.queries:
        if q.logical_query is None:
            continue
        gold = set(q.gold)
        negated = {a.text for a in negated_atoms(q.logical_query)}
        scored: dict[str, tuple[int, int]] = {}
        for atom in query_atoms(q.logical_query):
            members = sets.get(" ".join(atom.text.split()))
            if not members:
                continue
            for doc in members:
                if doc in gold or doc not in ts.documents:
                    continue
                in_negated, hits = scored.get(doc, (0, 0))
                if atom.text in negated:
                    in_negated = 1
                else:
                    hits += 1
                scored[doc] = (in_negated, hits)
        ranked = sorted(scored, key=lambda d: (-scored[d][0], -scored[d][1], d))
        if ranked:
            out[q.query_id] = ranked[:limit]
    return out


def mining_cache_folder(root: str | os.PathLike[str], model: Any, weights_fingerprint: str) -> Path:
    """The folder under ``root`` for :func:`mined_hard_negatives`' embedding cache of ``model``.

    Keyed by everything the embeddings depend on besides the texts and prompts (which the
    library hashes into its file names): the weights' fingerprint, the module stack, the
    maximum length and the parameters' dtype. Why: sentence-transformers names its cache
    files after ``model_card_data.base_model``, so two models of the same name (a base and
    a model fine-tuned from it) would share files in one folder.
    """
    if not weights_fingerprint:
        raise ValueError("a mining cache needs the weights' fingerprint")
    try:
        dtype = str(next(model.parameters()).dtype)
    except (AttributeError, StopIteration, TypeError):
        dtype = "unknown"
    key = {
        "weights": weights_fingerprint,
        "modules": [type(m).__name__ for m in model] if hasattr(model, "__iter__") else [],
        "max_seq_length": getattr(model, "max_seq_length", None),
        "dtype": dtype,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()
    return Path(root) / f"mining-{digest[:24]}"


def _drop_torn_files(folder: Path) -> None:
    """Delete cached ``.npy`` files that do not load: the library writes them in place, so an
    interrupted run can leave a truncated one that would fail every later run."""
    import numpy as np

    for path in folder.glob("*.npy"):
        try:
            np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as err:
            log.warning("removing unreadable mining cache file %s (%s)", path, err)
            path.unlink(missing_ok=True)


def ranked_hard_negatives(
    ts: TrainingSet,
    ranked: Mapping[str, Sequence[str]],
    *,
    num_negatives: int = 4,
    known_positives: Mapping[str, Set[str]] | None = None,
) -> dict[str, list[str]]:
    """Query id -> the first ``num_negatives`` documents of its ranking (best first) that are
    neither gold nor a known positive of the query; queries with none are left out."""
    out: dict[str, list[str]] = {}
    for q in ts.queries:
        excluded = set(q.gold) | set((known_positives or {}).get(q.query_id, ()))
        chosen = [d for d in dict.fromkeys(ranked.get(q.query_id, ())) if d not in excluded]
        if chosen:
            out[q.query_id] = chosen[:num_negatives]
    return out


def mined_hard_negatives(
    ts: TrainingSet,
    model: Any,
    *,
    num_negatives: int = 4,
    range_min: int = 0,
    range_max: int = 50,
    batch_size: int = 64,
    known_positives: Mapping[str, Set[str]] | None = None,
    cache_folder: str | os.PathLike[str] | None = None,
) -> dict[str, list[str]]:
    """Query id -> documents the encoder ranks high that are not gold (nor a known positive).

    Runs :func:`sentence_transformers.util.mine_hard_negatives` over the whole document
    table with one ``(query, first gold page)`` row per query, asks for extra candidates to
    make room for the filtering, and drops every gold page and every ``known_positives``
    page of the query. A model with ``query`` / ``document`` prompts (EmbeddingGemma) mines
    with them, as it searches. ``cache_folder`` keeps the embeddings for the next run; give
    one keyed by the weights (:func:`mining_cache_folder`), never a folder shared by models.
    """
    import datasets
    from sentence_transformers.util import mine_hard_negatives

    if not ts.queries:
        return {}
    doc_ids = list(ts.documents)
    texts = [ts.documents[d] for d in doc_ids]
    by_text: dict[str, list[str]] = {}
    for doc, text in zip(doc_ids, texts, strict=True):
        by_text.setdefault(text, []).append(doc)
    pairs = datasets.Dataset.from_dict(
        {
            "anchor": [q.text for q in ts.queries],
            "positive": [ts.documents[q.gold[0]] for q in ts.queries],
        }
    )
    extra = num_negatives + 16
    prompts = getattr(model, "prompts", None) or {}
    prompt_names = {
        key: name
        for key, name in (("query_prompt_name", "query"), ("corpus_prompt_name", "document"))
        if prompts.get(name)
    }
    cache: dict[str, str] = {}
    if cache_folder is not None:
        folder = Path(cache_folder)
        folder.mkdir(parents=True, exist_ok=True)
        _drop_torn_files(folder)
        cache["cache_folder"] = str(folder)
    mined = mine_hard_negatives(
        pairs,
        model,
        corpus=texts,
        range_min=range_min,
        range_max=range_max,
        num_negatives=extra,
        sampling_strategy="top",
        # (anchor, [positive, negatives...]) rows keep queries with fewer candidates than
        # asked for; "n-tuple" would drop them.
        output_format="labeled-list",
        batch_size=batch_size,
        verbose=False,
        **prompt_names,
        **cache,
    )
    by_anchor: dict[str, list[str]] = {}
    for row in mined:
        by_anchor.setdefault(row["anchor"], list(row["positive"][1:]))
    ranked = {
        q.query_id: [doc for text in by_anchor.get(q.text, []) for doc in by_text.get(text, [])]
        for q in ts.queries
    }
    return ranked_hard_negatives(
        ts, ranked, num_negatives=num_negatives, known_positives=known_positives
    )


def with_hard_negatives(ts: TrainingSet, *sources: Mapping[str, Sequence[str]]) -> TrainingSet:
    """``ts`` with each query's hard negatives: the union of ``sources`` in order, no duplicates,
    never a gold page."""
    queries = []
    for q in ts.queries:
        gold = set(q.gold)
        merged = [d for src in sources for d in src.get(q.query_id, ()) if d not in gold]
        queries.append(replace(q, hard_negatives=tuple(dict.fromkeys(merged))))
    return TrainingSet(queries, ts.documents)
