"""The embedding verifier against a slow, loop-based reference of its definition."""

from __future__ import annotations

import numpy as np

from logic_rag.pipeline.context import SearchContext
from logic_rag.verifiers.base import CheckRequest
from logic_rag.verifiers.embedding import EmbeddingVerifier


def _reference(retriever, atom: str, rows: list[int], v: EmbeddingVerifier) -> np.ndarray:
    """Evidence = (1-α)·cos(doc) + α·max cos(sentence); p = σ((e - e_r) / T), e_r being
    the evidence of the atom's r-th best neighbour among its depth nearest documents."""
    encoder = retriever.dense.encoder
    vec = encoder.encode_queries([atom])[0].astype(np.float64)
    docs = retriever.resources.doc_vectors().astype(np.float64)
    passages = retriever.passages

    def evidence(row: int) -> float:
        start, end = passages.offsets[row], passages.offsets[row + 1]
        best = max(float(vec @ passages.vectors[j].astype(np.float64)) for j in range(start, end))
        return (1 - v.passage_weight) * float(vec @ docs[row]) + v.passage_weight * best

    depth = min(v.atom_depth, len(docs))
    neighbours = np.argsort(-(docs @ vec))[:depth]
    ranked = sorted((evidence(int(r)) for r in neighbours), reverse=True)
    rank = min(v.threshold_rank, max(1, len(docs) // 4), len(ranked))
    threshold = ranked[rank - 1]
    return np.array([1 / (1 + np.exp(-(evidence(r) - threshold) / v.temperature)) for r in rows])


def test_matches_the_reference(small_logic_retriever):
    v = EmbeddingVerifier(atom_depth=50, threshold_rank=7, temperature=0.05)
    rows = [0, 3, 17, 42, 99]
    ctx = SearchContext(small_logic_retriever.resources)
    checked = v.check([CheckRequest(("rivers of the north", "lakes"), np.array(rows))], ctx)[0]
    for i, atom in enumerate(("rivers of the north", "lakes")):
        np.testing.assert_allclose(
            checked.probs[i], _reference(small_logic_retriever, atom, rows, v), atol=2e-3
        )
    assert checked.evidence.shape == (2, 5)


def test_settings_are_validated():
    import pytest

    with pytest.raises(ValueError):
        EmbeddingVerifier(temperature=0)
    with pytest.raises(ValueError):
        EmbeddingVerifier(passage_weight=1.5)
