"""Exceptions raised by logic-rag.

Every error says what went wrong and what to do about it; they share one base class so
callers can catch everything logic-rag raises with ``except LogicRagError``.
"""

from __future__ import annotations

__all__ = [
    "LogicRagError",
    "ModelNotFoundError",
    "CorpusFormatError",
    "IndexCorruptError",
    "IndexMismatchError",
    "StoreError",
]


class LogicRagError(Exception):
    """Base class of all logic-rag errors."""


class ModelNotFoundError(LogicRagError, LookupError):
    """A model name could not be resolved to weights on this machine (nothing is downloaded)."""


class CorpusFormatError(LogicRagError, ValueError):
    """A corpus or query file is malformed; the message names the file and the line."""

    def __init__(self, path: object, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class IndexCorruptError(LogicRagError):
    """An index folder is incomplete or a file in it does not match its recorded checksum."""


class IndexMismatchError(LogicRagError, ValueError):
    """The query encoder does not match the model or dimension the index was built with."""


class StoreError(LogicRagError):
    """A vector store (Milvus) cannot be reached, or its collection is missing or taken.

    The message names the store and the collection, and what to do (rebuild, choose
    another collection name, or replace it explicitly).
    """
