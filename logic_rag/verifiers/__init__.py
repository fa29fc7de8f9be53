"""Constraint verifiers: P(document satisfies atom), one verifier per file.

:class:`EmbeddingVerifier` (calibrated cosine evidence), :class:`CrossEncoderVerifier` (a
sentence-transformers ``CrossEncoder``), :class:`LLMVerifier` (yes/no log-probabilities
from any generator); :class:`Verify` is the pipeline stage that applies one.
"""

from __future__ import annotations

# Plain imports: the verifiers load their models (cross-encoder, LLM) on first use.
from .base import Checked, CheckRequest, PairVerifier, Verifier, Verify
from .cache import PairCache
from .certified import CertifiedTopK
from .cross_encoder import CrossEncoderVerifier
from .embedding import CandidateEmbeddingVerifier, EmbeddingVerifier
from .llm import LLMVerifier
from .spec import make_verifier, verifier_spec
from .verdicts import VerdictRule
from .whole_query import WholeQueryVerify

__all__ = [
    "CandidateEmbeddingVerifier",
    "CertifiedTopK",
    "CheckRequest",
    "Checked",
    "CrossEncoderVerifier",
    "EmbeddingVerifier",
    "LLMVerifier",
    "PairCache",
    "PairVerifier",
    "VerdictRule",
    "Verifier",
    "Verify",
    "WholeQueryVerify",
    "make_verifier",
    "verifier_spec",
]
