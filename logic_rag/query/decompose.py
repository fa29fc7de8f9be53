"""What every query decomposer returns, and the interface the retriever depends on.

A decomposer turns user text into a :data:`LogicalQuery`. The retriever does not care how
(rules, an LLM, a cache), only that it gets a query, a confidence in [0, 1] that it can use
to fall back to plain retrieval, and the name of the method that produced it.
Implementations: :class:`~logic_rag.query.rules.RuleDecomposer` and
:class:`~logic_rag.query.llm.LLMDecomposer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from logic_rag.query.algebra import LogicalQuery

__all__ = ["Decomposition", "Decomposer", "require_text"]


@dataclass(frozen=True)
class Decomposition:
    """A decomposed query; ``source`` names its producer ("rules", "llm", "fallback")."""

    query: LogicalQuery
    confidence: float
    source: str

    def __post_init__(self) -> None:
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be in [0, 1], got {self.confidence}")


@runtime_checkable
class Decomposer(Protocol):
    """Anything with ``decompose(text) -> Decomposition``."""

    def decompose(self, text: str) -> Decomposition:
        """Decompose ``text``; empty or whitespace-only text raises ``ValueError``."""
        ...


def require_text(text: object) -> str:
    """``text`` stripped; a clear error for non-strings and empty queries."""
    if not isinstance(text, str):
        raise TypeError(f"query text must be a str, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise ValueError("cannot decompose an empty query: pass the user's question as text")
    return stripped
