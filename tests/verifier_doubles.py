"""Test doubles for the costly verifier of ``quality``, so tests that run every strategy
check the pipeline without loading an LLM (the LLM paths have their own end-to-end tests)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from logic_rag.verifiers.base import PairVerifier


@dataclass(frozen=True, eq=False)
class KeywordVerifier(PairVerifier):
    """Log-odds +3 when every word of the atom is in the text, else -3."""

    name: str = "keyword"

    def fingerprint(self) -> str:
        return "keyword-double"

    def score_texts(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return np.array(
            [
                3.0 if all(w in text.lower() for w in atom.lower().split()) else -3.0
                for atom, text in pairs
            ]
        )
