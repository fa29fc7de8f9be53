"""The logic-aware retriever: decompose a query, score every constraint, rank by the logic.

A first measurement on real QUEST text showed that retrieving each atom separately and
combining the lists loses to the whole-query embedding, while applying the logic on top
of whole-query candidates gains. The default strategy therefore is ``rerank``: take the
whole query's candidates, then re-score them with the soft truth of the decomposed
query. The other strategies are there to be measured against it:

=================  ===================================================================
``vanilla``        whole-query dense retrieval, no logic
``rerank``         whole-query candidates + ``rerank_weight`` × soft truth of the logic
``setops``         soft set algebra over calibrated atom scores; candidates from the
                   whole query and every positive atom
``fusion``         score fusion of raw atom similarities (AND +, OR max, NOT −)
``fusion-product`` the same with AND as a product
``orthogonal``     dense orthogonal negation: the whole-query vector projected away
                   from each negated atom
``splade*``        learned-sparse strategies (see :mod:`logic_rag.sparse_retriever`)
=================  ===================================================================

All atoms of all queries in a batch are encoded in one encoder call and searched in one
index call. Every hit says which constraints it satisfied (``Hit.constraints``) and how
strongly (``Hit.constraint_scores``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from logic_rag.compose.calibration import atom_thresholds, calibrate
from logic_rag.compose.soft_logic import TNorm, fuse_scores, soft_truth
from logic_rag.corpus import Document
from logic_rag.encoders.dense import DenseEncoder, check_texts
from logic_rag.errors import IndexMismatchError
from logic_rag.index.faiss_index import IndexKind
from logic_rag.index.passages import PassageVectors
from logic_rag.models import DEFAULT_DENSE_MODEL
from logic_rag.query.algebra import (
    Atom,
    LogicalQuery,
    atoms,
    negated_atoms,
    positive_atoms,
    render,
    to_json,
)
from logic_rag.query.decompose import Decomposer, Decomposition
from logic_rag.query.rules import RuleDecomposer
from logic_rag.retriever import Hit, Retriever

__all__ = ["DENSE_STRATEGIES", "STRATEGIES", "LogicConfig", "LogicRetriever"]

DENSE_STRATEGIES = ("vanilla", "rerank", "setops", "fusion", "fusion-product", "orthogonal")
SPARSE_STRATEGIES = ("splade", "splade-compose", "splade-nrf")
STRATEGIES = DENSE_STRATEGIES + SPARSE_STRATEGIES


@dataclass(frozen=True)
class LogicConfig:
    """Knobs of the logical strategies; defaults were chosen by measurement (see README).

    Attributes:
        candidates: whole-query candidates that ``rerank`` re-scores (and that ``setops``
            and ``fusion`` add to the atoms' candidates).
        atom_depth: neighbours retrieved per atom; they calibrate the atom and, for
            ``setops``/``fusion``, are candidates.
        threshold_rank: the atom's neighbour at this rank marks p = 0.5.
        temperature: width of the calibration sigmoid, in cosine units.
        passage_weight: share of the best-sentence similarity in an atom's evidence (the
            rest is the whole-document similarity); used when passage vectors exist.
        rerank_weight: weight of the soft truth added to the whole-query score.
        setops_query_weight: weight of the whole-query score inside ``setops``.
        tnorm: ``product`` or ``godel`` (min/max) fuzzy connectives.
        negation_weight: how much ``fusion`` subtracts for a negated atom.
        min_confidence: decompositions less confident than this fall back to ``vanilla``.
    """

    candidates: int = 100
    atom_depth: int = 300
    threshold_rank: int = 20
    temperature: float = 0.1
    passage_weight: float = 0.5
    rerank_weight: float = 0.5
    setops_query_weight: float = 0.1
    tnorm: TNorm = "product"
    negation_weight: float = 1.0
    min_confidence: float = 0.0

    def __post_init__(self) -> None:
        if self.candidates < 1 or self.atom_depth < 1 or self.threshold_rank < 1:
            raise ValueError("candidates, atom_depth and threshold_rank must be >= 1")
        if self.temperature <= 0:
            raise ValueError("temperature must be positive")
        if not 0.0 <= self.passage_weight <= 1.0:
            raise ValueError("passage_weight must be in [0, 1]")


def _constraint_name(atom: Atom, negated: bool) -> str:
    return f"NOT {atom.text}" if negated else atom.text


def _check_strategy(strategy: str, has_sparse: bool) -> str:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if strategy.startswith("splade") and not has_sparse:
        raise ValueError(
            f"strategy {strategy!r} needs a SPLADE index: build with sparse_model='splade-tiny'"
        )
    return strategy


@dataclass
class _Plan:
    """One query's work: its text, logic, and where its vectors sit in the batch."""

    text: str
    logic: LogicalQuery
    decomposition: Decomposition | None
    atoms: list[Atom]
    row: int  # row of the whole-query vector; atoms follow it

    @property
    def texts(self) -> list[str]:
        """The texts this plan encodes: the whole query, then its atoms (rows from ``row``)."""
        return [self.text, *(a.text for a in self.atoms)]


class LogicRetriever:
    """Dense (and optionally SPLADE) retrieval that respects AND / OR / NOT.

    Build with :meth:`build`, persist with :meth:`save`, reopen with :meth:`load`::

        retriever = LogicRetriever.build(docs, model="minilm")
        hits = retriever.search("Orchids of Indonesia and Malaysia but not Thailand", k=10)
        hits[0].constraints  # {"Orchids of Indonesia": True, ..., "NOT Orchids of Thailand": True}
    """

    def __init__(
        self,
        dense: Retriever,
        *,
        passages: PassageVectors | None = None,
        sparse: Any | None = None,
        decomposer: Decomposer | None = None,
        strategy: str = "rerank",
        config: LogicConfig | None = None,
    ) -> None:
        if passages is not None and passages.n_documents != len(dense):
            raise IndexMismatchError(
                f"passage vectors cover {passages.n_documents} documents, the index {len(dense)}"
            )
        self.dense = dense
        self.passages = passages
        self.sparse = sparse
        self.decomposer: Decomposer = decomposer or RuleDecomposer()
        self.config = config or LogicConfig()
        self.strategy = _check_strategy(strategy, sparse is not None)
        self._vectors: np.ndarray | None = None
        self._rows: dict[str, int] | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        *,
        model: str | os.PathLike[str] | DenseEncoder = DEFAULT_DENSE_MODEL,
        passages: bool = True,
        sparse_model: str | os.PathLike[str] | None = None,
        strategy: str = "rerank",
        decomposer: Decomposer | None = None,
        config: LogicConfig | None = None,
        index: IndexKind = "flat",
        show_progress_bar: bool | None = None,
        **index_options: Any,
    ) -> LogicRetriever:
        """Embed and index ``documents``.

        ``passages`` also embeds every sentence (about twice the indexing time) so that
        constraints are checked against the best-matching sentence; ``sparse_model``
        adds a SPLADE inverted index for the ``splade*`` strategies.
        """
        docs = list(documents)
        dense = Retriever.build(
            docs, model=model, index=index, show_progress_bar=show_progress_bar, **index_options
        )
        passage_vectors = None
        if passages:
            passage_vectors = PassageVectors.build(
                dense.encoder,
                [d.text or d.title for d in docs],
                show_progress_bar=show_progress_bar,
            )
        sparse = None
        if sparse_model is not None:
            from logic_rag.sparse_retriever import SparseSide

            sparse = SparseSide.build(docs, model=sparse_model, show_progress_bar=show_progress_bar)
        return cls(
            dense,
            passages=passage_vectors,
            sparse=sparse,
            decomposer=decomposer,
            strategy=strategy,
            config=config,
        )

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        strategy: str = "rerank",
        decomposer: Decomposer | None = None,
        config: LogicConfig | None = None,
        verify: bool = True,
        allow_model_mismatch: bool = False,
    ) -> LogicRetriever:
        """Open an index folder written by :meth:`save` (or by ``logic-rag index``)."""
        dense, manifest = Retriever.load_with_manifest(
            path, model=model, verify=verify, allow_model_mismatch=allow_model_mismatch
        )
        passages = None
        if manifest.get("passages"):
            passages = PassageVectors.load(Path(path), len(dense))
        sparse = None
        if "sparse" in manifest:
            from logic_rag.sparse_retriever import SparseSide

            sparse = SparseSide.load(Path(path), manifest["sparse"], dense.documents)
        return cls(
            dense,
            passages=passages,
            sparse=sparse,
            decomposer=decomposer,
            strategy=strategy,
            config=config,
        )

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write the dense index, documents, passage vectors and SPLADE index to one folder."""
        files: dict[str, Any] = {}
        manifest: dict[str, Any] = {"passages": self.passages is not None}
        if self.passages is not None:
            files.update(self.passages.writers())
        if self.sparse is not None:
            sparse_files, manifest["sparse"] = self.sparse.writers()
            files.update(sparse_files)
        return self.dense.save(out_dir, extra_files=files, extra_manifest=manifest)

    # ------------------------------------------------------------------ properties
    @property
    def documents(self) -> list[Document]:
        return self.dense.documents

    def __len__(self) -> int:
        return len(self.dense)

    def with_config(self, **changes: Any) -> LogicRetriever:
        """A retriever sharing this one's indexes with some config values changed."""
        clone = LogicRetriever(
            self.dense,
            passages=self.passages,
            sparse=self.sparse,
            decomposer=self.decomposer,
            strategy=self.strategy,
            config=replace(self.config, **changes),
        )
        clone._vectors = self._vectors
        clone._rows = self._rows
        return clone

    def _doc_vectors(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self.dense.index.vectors()
        return self._vectors

    # ------------------------------------------------------------------ decomposition
    def decompose(self, query: str) -> Decomposition:
        """The decomposer's reading of ``query``."""
        return self.decomposer.decompose(query)

    def _plan(
        self, texts: list[str], logical_queries: Sequence[LogicalQuery | None] | None
    ) -> list[_Plan]:
        if logical_queries is not None and len(logical_queries) != len(texts):
            raise ValueError(
                f"got {len(logical_queries)} logical queries for {len(texts)} query texts"
            )
        plans, row = [], 0
        for i, text in enumerate(texts):
            given = logical_queries[i] if logical_queries is not None else None
            decomposition = None
            if given is None:
                decomposition = self.decompose(text)
                logic: LogicalQuery = decomposition.query
                if decomposition.confidence < self.config.min_confidence:
                    logic = Atom(text)
            else:
                logic = given
            plan_atoms = atoms(logic)
            plans.append(_Plan(text, logic, decomposition, plan_atoms, row))
            row += 1 + len(plan_atoms)
        return plans

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        strategy: str | None = None,
        logical_query: LogicalQuery | None = None,
    ) -> list[Hit]:
        """Top-``k`` documents for ``query`` under ``strategy`` (default: the retriever's).

        ``logical_query`` bypasses the decomposer (for example QUEST's gold structure).
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        given = [logical_query] if logical_query is not None else None
        return self.search_batch([query], k, strategy=strategy, logical_queries=given)[0]

    def search_batch(
        self,
        queries: Sequence[str],
        k: int = 10,
        *,
        strategy: str | None = None,
        logical_queries: Sequence[LogicalQuery | None] | None = None,
    ) -> list[list[Hit]]:
        """Search many queries: one encoder call and one index call for all their atoms."""
        texts = check_texts(queries, "query")
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        k = min(k, max(len(self), 1))  # capped at the corpus size before any allocation
        strategy = _check_strategy(strategy or self.strategy, self.sparse is not None)
        if strategy == "vanilla":
            vectors = self.dense.encoder.encode_queries(texts)
            scores, ids = self.dense.index.search(vectors, k)
            return [self.dense._hits(s, i) for s, i in zip(scores, ids, strict=True)]
        plans = self._plan(texts, logical_queries)
        if strategy.startswith("splade"):
            found = self.sparse.search(plans, k, strategy, self.config)
            return self._explain(plans, found)
        all_texts = [t for p in plans for t in p.texts]
        vectors = self.dense.encoder.encode_queries(all_texts)
        if strategy == "orthogonal":
            return self._explain(plans, self._orthogonal(plans, vectors, k), vectors)
        depth = max(self.config.candidates, self.config.atom_depth, k)
        scores, ids = self.dense.index.search(vectors, depth)
        return [self._logical(p, vectors, scores, ids, k, strategy) for p in plans]

    # ------------------------------------------------------------------ strategies
    def _evidence(self, atom_vectors: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
        """Atom-document evidence: document similarity mixed with best-sentence similarity."""
        sims = atom_vectors @ self._doc_vectors()[doc_ids].T
        if self.passages is None or self.config.passage_weight == 0.0:
            return sims
        alpha = self.config.passage_weight
        return (1.0 - alpha) * sims + alpha * self.passages.max_sim(atom_vectors, doc_ids)

    def _atom_probabilities(
        self, plan: _Plan, vectors: np.ndarray, ids: np.ndarray, cand: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Evidence and calibrated probabilities of each atom, shape (atoms, candidates).

        Each atom's threshold is the evidence of its ``threshold_rank``-th best document
        among its ``atom_depth`` nearest neighbours (from the batched index search).
        """
        cfg = self.config
        rows = slice(plan.row + 1, plan.row + 1 + len(plan.atoms))
        neighbours = ids[rows, : cfg.atom_depth]
        union, inverse = np.unique(np.concatenate([cand, neighbours.ravel()]), return_inverse=True)
        valid = union >= 0
        evidence = np.full((len(plan.atoms), len(union)), -np.inf)
        evidence[:, valid] = self._evidence(vectors[rows], union[valid])
        at_cand = evidence[:, inverse[: len(cand)]]
        at_neighbours = np.take_along_axis(
            evidence, inverse[len(cand) :].reshape(neighbours.shape), axis=1
        )
        # A category rarely holds most of a corpus: on small corpora the boundary moves up.
        rank = min(cfg.threshold_rank, max(1, len(self) // 4))
        thresholds = atom_thresholds(-np.sort(-at_neighbours, axis=1), rank)
        return at_cand, calibrate(at_cand, thresholds, cfg.temperature)

    def _logical(
        self,
        plan: _Plan,
        vectors: np.ndarray,
        scores: np.ndarray,
        ids: np.ndarray,
        k: int,
        strategy: str,
    ) -> list[Hit]:
        cfg = self.config
        ranking = ids[plan.row]
        ranking = ranking[ranking >= 0]
        if strategy == "rerank":
            cand = ranking[: cfg.candidates]
        else:
            positive = set(positive_atoms(plan.logic))
            pools = [ranking[: cfg.candidates]] + [
                ids[plan.row + 1 + i, : cfg.atom_depth]
                for i, a in enumerate(plan.atoms)
                if a in positive
            ]
            cand = np.unique(np.concatenate(pools))
            cand = cand[cand >= 0]
        query_sims = self._doc_vectors()[cand] @ vectors[plan.row]
        sims, probs = self._atom_probabilities(plan, vectors, ids, cand)
        by_atom = {a.text: probs[i] for i, a in enumerate(plan.atoms)}
        if strategy == "rerank":
            final = query_sims + cfg.rerank_weight * soft_truth(plan.logic, by_atom, cfg.tnorm)
        elif strategy == "setops":
            final = (
                soft_truth(plan.logic, by_atom, cfg.tnorm) + cfg.setops_query_weight * query_sims
            )
        else:
            op = "product" if strategy == "fusion-product" else "sum"
            raw = {a.text: sims[i] for i, a in enumerate(plan.atoms)}
            final = fuse_scores(plan.logic, raw, op=op, negation_weight=cfg.negation_weight)
        order = np.argsort(-final, kind="stable")[:k]
        doc_ids, doc_scores = cand[order], final[order]
        if len(doc_ids) < k:
            # Past the re-scored candidates, the whole-query ranking continues, below them.
            seen = set(cand.tolist())
            tail = np.array(
                [d for d in ranking.tolist() if d not in seen][: k - len(doc_ids)], dtype=np.int64
            )
            if len(tail):
                floor = (doc_scores.min() if len(doc_scores) else 0.0) - 1.0
                tail_scores = floor - np.arange(len(tail), dtype=np.float64) * 1e-6
                doc_ids = np.concatenate([doc_ids, tail])
                doc_scores = np.concatenate([doc_scores, tail_scores])
        hits = self.dense._hits(doc_scores.astype(np.float32), doc_ids)
        for hit, j in zip(hits, order, strict=False):
            self._annotate(hit, plan, probs[:, j])
        return self._finish(plan, hits)

    def _orthogonal(self, plans: list[_Plan], vectors: np.ndarray, k: int) -> list[list[Hit]]:
        from logic_rag.compose.sparse_ops import orthogonal_negation

        composed = []
        for plan in plans:
            v = vectors[plan.row].astype(np.float64)
            negated = set(negated_atoms(plan.logic))
            for i, atom in enumerate(plan.atoms):
                if atom in negated:
                    v = orthogonal_negation(v, vectors[plan.row + 1 + i])
            composed.append(v / max(np.linalg.norm(v), 1e-12))
        scores, ids = self.dense.index.search(np.asarray(composed, dtype=np.float32), k)
        return [self.dense._hits(s, i) for s, i in zip(scores, ids, strict=True)]

    def _explain(
        self, plans: list[_Plan], found: list[list[Hit]], vectors: np.ndarray | None = None
    ) -> list[list[Hit]]:
        """Annotate hits found by a strategy that does not score atoms densely itself."""
        if vectors is None:
            texts = [t for p in plans for t in p.texts]
            vectors = self.dense.encoder.encode_queries(texts)
        _scores, ids = self.dense.index.search(vectors, self.config.atom_depth)
        rows = self._rows_by_id()
        for plan, hits in zip(plans, found, strict=True):
            cand = np.array([rows[h.id] for h in hits], dtype=np.int64)
            if len(cand):
                _evidence, probs = self._atom_probabilities(plan, vectors, ids, cand)
                for j, hit in enumerate(hits):
                    self._annotate(hit, plan, probs[:, j])
            self._finish(plan, hits)
        return found

    def _rows_by_id(self) -> dict[str, int]:
        if self._rows is None:
            self._rows = {d.id: i for i, d in enumerate(self.dense.documents)}
        return self._rows

    # ------------------------------------------------------------------ explanations
    def _annotate(self, hit: Hit, plan: _Plan, probs: np.ndarray) -> None:
        negated = set(negated_atoms(plan.logic))
        for atom, p in zip(plan.atoms, probs.tolist(), strict=True):
            is_neg = atom in negated
            degree = 1.0 - p if is_neg else p
            name = _constraint_name(atom, is_neg)
            hit.constraints[name] = bool(degree >= 0.5)
            hit.constraint_scores[name] = round(float(degree), 4)

    def _finish(self, plan: _Plan, hits: list[Hit]) -> list[Hit]:
        if len(plan.atoms) > 1 or plan.decomposition is not None:
            info: dict[str, Any] = {"query": render(plan.logic), "json": to_json(plan.logic)}
            if plan.decomposition is not None:
                info["confidence"] = plan.decomposition.confidence
                info["source"] = plan.decomposition.source
            for hit in hits:
                hit.logic = {**info, **hit.logic}
        return hits

    def describe(self) -> dict[str, Any]:
        """Model names, strategy and config, for reports and manifests."""
        return {
            "model": self.dense.encoder.name,
            "sparse_model": None if self.sparse is None else self.sparse.encoder.name,
            "strategy": self.strategy,
            "config": asdict(self.config),
            "documents": len(self),
        }
