"""Candidate sources: the first stages of a search pipeline, one per file.

Each adds documents to every query's candidate set (a union) and records its own ranking:
:class:`DenseCandidates` (whole query), :class:`AtomCandidates` (each positive atom),
:class:`BM25Candidates`, :class:`SpladeCandidates` (whole query or composed),
:class:`OrthogonalCandidates`, :class:`GivenCandidates` (a reranker's input, as given).
Several sources in a row form a fused hybrid pool; the ``rrf`` signal of
:class:`~logic_rag.pipeline.ranking.Combine` fuses their ranks.
"""

from __future__ import annotations

# Plain imports: each source needs only numpy; indexes and models live in the context.
from .atoms import AtomCandidates
from .bm25 import BM25Candidates
from .dense import DenseCandidates
from .given import GivenCandidates
from .orthogonal import OrthogonalCandidates
from .splade import SpladeCandidates

__all__ = [
    "AtomCandidates",
    "BM25Candidates",
    "DenseCandidates",
    "GivenCandidates",
    "OrthogonalCandidates",
    "SpladeCandidates",
]
