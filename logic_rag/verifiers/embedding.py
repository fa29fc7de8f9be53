"""Embedding evidence, calibrated per atom against its own corpus neighbourhood.

The evidence that a document satisfies an atom is the cosine similarity of the atom's
query-side embedding to the document vector, mixed with its best-matching sentence
(``passage_weight``; sentence vectors are stored in the index). Raw similarities are not
comparable across atoms, so each atom is calibrated against its ``atom_depth`` nearest
documents: the evidence of its ``threshold_rank``-th neighbour marks p = 0.5 (see
:mod:`logic_rag.compose.calibration`). The neighbourhood comes from the same batched
index search as the candidates, so the check costs a few matrix products.

Over a bare list of candidates (a reranker on someone else's store) the candidates are the
only corpus there is: the calibration then uses them as the neighbourhood, and
:class:`CandidateEmbeddingVerifier` puts the boundary between two candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logic_rag.compose.calibration import atom_thresholds, calibrate
from logic_rag.pipeline.context import SearchContext
from logic_rag.verifiers.base import Checked, CheckRequest, Verifier

__all__ = ["EmbeddingVerifier", "CandidateEmbeddingVerifier"]


@dataclass(frozen=True)
class EmbeddingVerifier(Verifier):
    """Calibrated cosine evidence (document and best sentence) for every atom.

    Attributes:
        atom_depth: neighbours searched per atom (its calibration neighbourhood).
        threshold_rank: the neighbour whose evidence marks p = 0.5 (capped at a quarter
            of the corpus, since a category rarely holds most of it).
        temperature: width of the calibration sigmoid, in cosine units.
        passage_weight: share of the best-sentence similarity in the evidence.
    """

    atom_depth: int = 300
    threshold_rank: int = 20
    temperature: float = 0.1
    passage_weight: float = 0.5
    name: str = "embedding"
    #: Verdicts compare a page with the corpus (``info["calibration"]``).
    calibration_scope: ClassVar[str | None] = "corpus"

    def __post_init__(self) -> None:
        if self.atom_depth < 1 or self.threshold_rank < 1:
            raise ValueError("atom_depth and threshold_rank must be >= 1")
        if self.temperature <= 0:
            raise ValueError("temperature must be positive")
        if not 0.0 <= self.passage_weight <= 1.0:
            raise ValueError("passage_weight must be in [0, 1]")

    def prepare(self, atoms: Sequence[str], ctx: SearchContext) -> None:
        ctx.want(list(atoms), self.atom_depth)

    def evidence(
        self, atom_vectors: np.ndarray, rows: np.ndarray, ctx: SearchContext
    ) -> np.ndarray:
        """Document similarity mixed with best-sentence similarity, ``(atoms, rows)``."""
        resources = ctx.resources
        sims = atom_vectors @ resources.doc_vectors()[rows].T
        if resources.passages is None or self.passage_weight == 0.0:
            return sims
        alpha = self.passage_weight
        return (1.0 - alpha) * sims + alpha * resources.passages.max_sim(atom_vectors, rows)

    def check(self, requests: Sequence[CheckRequest], ctx: SearchContext) -> list[Checked]:
        return [self._check_one(r, ctx) for r in requests]

    def _check_one(self, request: CheckRequest, ctx: SearchContext) -> Checked:
        atoms, cand = list(request.atoms), np.asarray(request.rows, dtype=np.int64)
        vectors = ctx.vectors(atoms)
        depth = min(self.atom_depth, len(ctx.resources))
        neighbours = np.stack([_padded(ctx.search(a, depth)[1], depth) for a in atoms])
        union, inverse = np.unique(np.concatenate([cand, neighbours.ravel()]), return_inverse=True)
        valid = union >= 0
        evidence = np.full((len(atoms), len(union)), -np.inf)
        evidence[:, valid] = self.evidence(vectors, union[valid], ctx)
        at_cand = evidence[:, inverse[: len(cand)]]
        at_neighbours = np.take_along_axis(
            evidence, inverse[len(cand) :].reshape(neighbours.shape), axis=1
        )
        thresholds = self.thresholds(-np.sort(-at_neighbours, axis=1), len(ctx.resources))
        return Checked(calibrate(at_cand, thresholds, self.temperature), at_cand)

    def threshold_rank_for(self, corpus_size: int) -> int:
        """The neighbour rank that marks p = 0.5 in a corpus of ``corpus_size``."""
        return min(self.threshold_rank, max(1, corpus_size // 4))

    def thresholds(self, ranked: np.ndarray, corpus_size: int) -> np.ndarray:
        """Per-atom p = 0.5 boundary from each atom's neighbour evidence, best first."""
        return atom_thresholds(ranked, self.threshold_rank_for(corpus_size))


@dataclass(frozen=True)
class CandidateEmbeddingVerifier(EmbeddingVerifier):
    """:class:`EmbeddingVerifier` calibrated on a reranker's candidates alone.

    A reranker's index holds only the few documents another retriever returned, so the
    atom's neighbourhood is those ``n`` candidates and the rank ``r`` is
    ``min(threshold_rank, max(1, n // 4))``, as in a corpus. The boundary is put halfway
    between the evidence of the ``r``-th and the ``(r+1)``-th neighbour instead of at the
    ``r``-th: with the corpus rule and fewer than eight candidates (``r = 1``), the page
    that matches an atom best would sit at p = 0.5 exactly, so a page that plainly *is* a
    negated atom's member would never be flagged. With the midpoint the best ``r``
    candidates lie above p = 0.5 and the rest below, by their evidence gap over
    ``temperature``; with many candidates it is practically the corpus rule. With a
    single candidate there is nothing to compare: every atom gets p = 0.5.
    """

    #: Verdicts compare a page only with its fellow candidates (``info["calibration"]``).
    calibration_scope: ClassVar[str | None] = "candidates"

    def thresholds(self, ranked: np.ndarray, corpus_size: int) -> np.ndarray:
        rank = self.threshold_rank_for(corpus_size)
        at_rank = atom_thresholds(ranked, rank)
        if ranked.shape[1] <= rank:
            return at_rank
        below = ranked[:, rank]
        return np.where(np.isfinite(below), (at_rank + below) / 2.0, at_rank)


def _padded(ids: np.ndarray, depth: int) -> np.ndarray:
    if len(ids) >= depth:
        return ids[:depth]
    return np.concatenate([ids, np.full(depth - len(ids), -1, dtype=np.int64)])
