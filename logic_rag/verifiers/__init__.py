"""Constraint verifiers: P(document satisfies atom), one verifier per file.

:class:`EmbeddingVerifier` (calibrated cosine evidence), :class:`CrossEncoderVerifier` (a
sentence-transformers ``CrossEncoder``), :class:`LLMVerifier` (yes/no log-probabilities
from any generator); :class:`Verify` is the pipeline stage that applies one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Verifier": "base",
    "PairVerifier": "base",
    "CheckRequest": "base",
    "Checked": "base",
    "Verify": "base",
    "PairCache": "cache",
    "EmbeddingVerifier": "embedding",
    "CandidateEmbeddingVerifier": "embedding",
    "CrossEncoderVerifier": "cross_encoder",
    "LLMVerifier": "llm",
    "make_verifier": "spec",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .base import Checked, CheckRequest, PairVerifier, Verifier, Verify
    from .cache import PairCache
    from .cross_encoder import CrossEncoderVerifier
    from .embedding import CandidateEmbeddingVerifier, EmbeddingVerifier
    from .llm import LLMVerifier
    from .spec import make_verifier

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
