"""Corpus loaders: QUEST ``documents.jsonl``, BEIR folders, plain JSONL and plain text.

Every loader streams, so a million-document corpus never sits in memory twice, and a
malformed line fails with :class:`CorpusFormatError` naming the file and the line.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from logic_rag.errors import CorpusFormatError

__all__ = [
    "Document",
    "CorpusFormat",
    "read_jsonl",
    "detect_format",
    "iter_documents",
    "load_documents",
    "BeirDataset",
    "load_beir",
]

CorpusFormat = Literal["auto", "quest", "beir", "jsonl", "text"]


@dataclass(frozen=True)
class Document:
    """One retrievable unit. ``id`` is unique in a corpus; ``title`` may be empty."""

    id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content(self) -> str:
        """The text that is embedded: title and body."""
        return f"{self.title}\n{self.text}" if self.title else self.text

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "title": self.title, "text": self.text}
        if self.metadata:
            row["metadata"] = self.metadata
        return row


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")  # noqa: SIM115 - closed by the caller


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    with _open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CorpusFormatError(path, lineno, f"not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise CorpusFormatError(
                    path, lineno, f"expected a JSON object, got {type(obj).__name__}"
                )
            yield lineno, obj


def detect_format(path: str | os.PathLike[str]) -> CorpusFormat:
    """Guess the format from the file name and its first JSON line."""
    path = Path(path)
    if path.is_dir():
        return "beir"
    name = path.name.removesuffix(".gz")
    if not name.endswith((".jsonl", ".json")):
        return "text"
    for _lineno, obj in read_jsonl(path):
        if "_id" in obj:
            return "beir"
        if "title" in obj and "text" in obj and "id" not in obj:
            return "quest"
        return "jsonl"
    return "jsonl"


def _string_field(path: Path, lineno: int, obj: dict[str, Any], key: str, required: bool) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise CorpusFormatError(path, lineno, f"missing field {key!r}")
        return ""
    if isinstance(value, int | float) and key in ("_id", "id"):
        return str(value)
    if not isinstance(value, str):
        raise CorpusFormatError(
            path, lineno, f"field {key!r} must be a string, got {type(value).__name__}"
        )
    return value


def iter_documents(
    path: str | os.PathLike[str], format: CorpusFormat = "auto"
) -> Iterator[Document]:
    """Stream documents from a corpus file (or a BEIR folder).

    - ``quest``: ``{"title", "text"}`` per line; the title is the id (QUEST's gold docs
      are titles).
    - ``beir``: ``{"_id", "title", "text"}`` per line (a folder means its corpus.jsonl).
    - ``jsonl``: ``{"text"}`` plus optional ``id``, ``title``, ``metadata``; a missing id
      becomes the line number.
    - ``text``: one document per non-blank line; the id is the line number.
    """
    path = Path(path)
    if format == "auto":
        format = detect_format(path)
    if path.is_dir():
        path = path / "corpus.jsonl"
    if format == "text":
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        with _open_text(path) as handle:
            for lineno, line in enumerate(handle, start=1):
                if line.strip():
                    yield Document(id=str(lineno), text=line.rstrip("\n"))
        return
    for lineno, obj in read_jsonl(path):
        if format == "quest":
            title = _string_field(path, lineno, obj, "title", True)
            text = _string_field(path, lineno, obj, "text", True)
            yield Document(id=title, title=title, text=text)
        elif format == "beir":
            yield Document(
                id=_string_field(path, lineno, obj, "_id", True),
                title=_string_field(path, lineno, obj, "title", False),
                text=_string_field(path, lineno, obj, "text", True),
            )
        elif format == "jsonl":
            doc_id = _string_field(path, lineno, obj, "id", False) or str(lineno)
            metadata = obj.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise CorpusFormatError(path, lineno, "field 'metadata' must be an object")
            yield Document(
                id=doc_id,
                title=_string_field(path, lineno, obj, "title", False),
                text=_string_field(path, lineno, obj, "text", True),
                metadata=metadata,
            )
        else:
            raise ValueError(f"unknown corpus format {format!r}; use quest, beir, jsonl or text")


def load_documents(path: str | os.PathLike[str], format: CorpusFormat = "auto") -> list[Document]:
    """Read a whole corpus; duplicate ids are an error (they would make hits ambiguous)."""
    docs = list(iter_documents(path, format))
    seen: set[str] = set()
    for doc in docs:
        if doc.id in seen:
            raise CorpusFormatError(path, None, f"duplicate document id {doc.id!r}")
        seen.add(doc.id)
    return docs


@dataclass
class BeirDataset:
    """A BEIR-format dataset: corpus, queries and graded relevance judgements."""

    corpus: list[Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_beir(folder: str | os.PathLike[str], split: str = "test") -> BeirDataset:
    """Load ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` from a folder."""
    folder = Path(folder)
    corpus = load_documents(folder / "corpus.jsonl", "beir")
    queries: dict[str, str] = {}
    qpath = folder / "queries.jsonl"
    for lineno, obj in read_jsonl(qpath):
        qid = _string_field(qpath, lineno, obj, "_id", True)
        queries[qid] = _string_field(qpath, lineno, obj, "text", True)
    qrels: dict[str, dict[str, int]] = {}
    rpath = folder / "qrels" / f"{split}.tsv"
    if not rpath.is_file():
        raise FileNotFoundError(f"{rpath}: no such file (BEIR qrels for split {split!r})")
    with open(rpath, encoding="utf-8", newline="") as handle:
        for lineno, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or (lineno == 1 and row[0] == "query-id"):
                continue
            if len(row) != 3:
                raise CorpusFormatError(
                    rpath, lineno, f"expected 3 tab-separated fields, got {len(row)}"
                )
            try:
                score = int(row[2])
            except ValueError:
                raise CorpusFormatError(
                    rpath, lineno, f"score {row[2]!r} is not an integer"
                ) from None
            qrels.setdefault(row[0], {})[row[1]] = score
    return BeirDataset(corpus=corpus, queries=queries, qrels=qrels)
