"""Corpus loaders: QUEST ``documents.jsonl``, BEIR folders, plain JSONL and plain text.

Every loader streams, so a million-document corpus never sits in memory twice, and a
malformed line fails with :class:`CorpusFormatError` naming the file and the line.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from logic_rag.errors import CorpusFormatError
from logic_rag.json_limits import MAX_JSON_DEPTH, JsonDepthError, loads_bounded

_log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MAX_DOCUMENT_CHARS",
    "DEFAULT_MAX_LINE_BYTES",
    "MAX_JSON_DEPTH",
    "line_limit",
    "TextBudget",
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


def _check_file(path: Path) -> None:
    """A readable regular file, else a clear error (``/dev/null`` is not "missing")."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except OSError as exc:
        raise CorpusFormatError(path, None, f"cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise CorpusFormatError(path, None, "is a folder, not a corpus file")
    if not stat.S_ISREG(mode):
        raise CorpusFormatError(
            path, None, "is not a regular file (a device, pipe or socket); pass a corpus file"
        )


#: Bytes one line of a corpus (or query) file may hold, and one stored document row
#: (``documents.jsonl``, after JSON escaping) may take. A line is read at most this far
#: before it is refused, so a 2 GB line (or a sparse file of NUL bytes with no newline)
#: costs this much memory, not gigabytes. Real documents are far shorter (the longest
#: Wikipedia article is ~1.5 MB of text); the one-50 MB-document case of issue 32 still
#: indexes. Raise it with ``$LOGIC_RAG_MAX_LINE_BYTES``.
DEFAULT_MAX_LINE_BYTES = 64 * 2**20
_LINE_BYTES_ENV = "LOGIC_RAG_MAX_LINE_BYTES"


def line_limit(value: int | None = None) -> int:
    """The line bound to use: ``value``, else ``$LOGIC_RAG_MAX_LINE_BYTES``, else
    :data:`DEFAULT_MAX_LINE_BYTES`; anything but a positive integer is a ``ValueError``."""
    if value is None:
        text = os.environ.get(_LINE_BYTES_ENV, "").strip()
        if not text:
            return DEFAULT_MAX_LINE_BYTES
        try:
            value = int(text)
        except ValueError:
            raise ValueError(
                f"${_LINE_BYTES_ENV} must be a whole number of bytes, got {text!r}"
            ) from None
        if value < 1:
            raise ValueError(f"${_LINE_BYTES_ENV} must be at least 1, got {value}")
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_line_bytes must be a positive integer, got {value!r}")
    return value


def _long_line(path: Path, lineno: int, limit: int, what: str = "the line") -> CorpusFormatError:
    return CorpusFormatError(
        path,
        lineno,
        f"{what} is longer than {limit:,} bytes (the line limit); split the document, or raise "
        f"the limit with ${_LINE_BYTES_ENV} (max_line_bytes=)",
    )


def _bounded_lines(handle: Any, path: Path, limit: int) -> Iterator[bytes]:
    """The raw lines of ``handle``, each read at most ``limit`` bytes far: a longer one is
    refused with its line number before the rest of it is read."""
    lineno = 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > limit and not (len(raw) == limit + 1 and raw.endswith(b"\n")):
            raise _long_line(path, lineno, limit)
        yield raw


def _lines(path: Path, limit: int | None = None) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` of a UTF-8 file (gzip if it ends in ``.gz``), checked per line.

    Invalid UTF-8, a ``.gz`` that is not gzip and a line longer than ``limit`` bytes
    (:func:`line_limit`) fail with the file and line.
    """
    _check_file(path)
    limit = line_limit(limit)
    lineno = 0
    try:
        handle = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115
        with handle:
            lines = _bounded_lines(handle, path, limit)
            for lineno, line in _decoded(lines, path):  # noqa: B007 - used after the loop
                yield lineno, line
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise CorpusFormatError(
            path, lineno + 1 if lineno else None, f"not a valid gzip file ({exc})"
        ) from None


def _decoded(handle: Any, path: Path) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` of an open binary file, decoded as UTF-8 line by line.

    A UTF-8 byte-order mark at the start of the file is dropped (editors on Windows write
    one; it is not part of the first document's text or JSON)."""
    for lineno, raw in enumerate(handle, start=1):
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        yield lineno, decode_line(raw, path, lineno)


def decode_line(raw: bytes, path: Path, lineno: int) -> str:
    """One line of a file as UTF-8 text; invalid bytes raise a ``file:line`` error."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusFormatError(
            path,
            lineno,
            f"invalid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
            f"save the file as UTF-8",
        ) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use null for a missing number)")


def _check_strings(value: Any) -> str | None:
    """The first string in ``value`` that is not valid Unicode (a lone surrogate), if any."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            bad = _check_strings(key) or _check_strings(item)
            if bad is not None:
                return bad
    elif isinstance(value, list):
        for item in value:
            bad = _check_strings(item)
            if bad is not None:
                return bad
    return None


#: Characters of a document's text that indexing embeds (dense, sentences, SPLADE). Every
#: model reads only its first few thousand tokens and sentence evidence its first 32
#: sentences, so the cut changes no vector of a normal document; it keeps one huge
#: document from setting the memory and time of ``index``.
DEFAULT_MAX_DOCUMENT_CHARS = 100_000


class TextBudget:
    """A character budget per text, with a count of what it cut (reported, never silent)."""

    def __init__(self, max_chars: int = DEFAULT_MAX_DOCUMENT_CHARS) -> None:
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars <= 0:
            raise ValueError(f"the character budget must be a positive integer, got {max_chars!r}")
        self.max_chars = max_chars
        self.cut = 0
        self.longest = 0
        self.total = 0

    def apply(
        self, texts: Iterable[str], what: str = "documents", *, before: str = "embedding"
    ) -> list[str]:
        """``texts`` with each cut to :attr:`max_chars`; a cut is logged as a warning that
        says what the texts were cut ``before`` (embedding, BM25 indexing)."""
        out: list[str] = []
        cut = 0
        for text in texts:
            self.total += 1
            if len(text) > self.max_chars:
                cut += 1
                self.longest = max(self.longest, len(text))
                text = text[: self.max_chars]
            out.append(text)
        if cut:
            self.cut += cut
            _log.warning(
                "logic-rag: %d of %d %s are longer than %d characters and were cut to that "
                "before %s (longest: %d characters); the index manifest records it. "
                "Raise the budget (--max-doc-chars) to read more of them.",
                cut,
                len(out),
                what,
                self.max_chars,
                before,
                self.longest,
            )
        return out

    def record(self) -> dict[str, int]:
        """The manifest entry: the budget, how many texts it cut and the longest one."""
        return {
            "max_document_chars": self.max_chars,
            "documents_cut": self.cut,
            "longest_document_chars": self.longest,
        }


def read_jsonl(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    handle: BinaryIO | None = None,
    max_line_bytes: int | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    ``strict`` also refuses ``NaN`` / ``Infinity`` (not JSON; they would come back out as
    invalid JSON) and strings that are not valid Unicode (``"\\ud800"``), naming the line.
    With ``handle`` (an open binary file, e.g. an index snapshot's reader) the lines are
    read from it and ``path`` only names it in messages. A line longer than
    ``max_line_bytes`` (files opened here; see :func:`line_limit`) or a value nested
    deeper than :data:`~logic_rag.json_limits.MAX_JSON_DEPTH` is refused with its line.
    """
    path = Path(path)
    lines = _lines(path, max_line_bytes) if handle is None else _decoded(handle, path)
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            obj = loads_bounded(line, parse_constant=_reject_constant if strict else None)
        except json.JSONDecodeError as exc:
            raise CorpusFormatError(path, lineno, f"not valid JSON ({exc.msg})") from None
        except (JsonDepthError, ValueError) as exc:
            raise CorpusFormatError(path, lineno, str(exc)) from None
        if not isinstance(obj, dict):
            raise CorpusFormatError(
                path, lineno, f"expected a JSON object, got {type(obj).__name__}"
            )
        if strict:
            bad = _check_strings(obj)
            if bad is not None:
                raise CorpusFormatError(
                    path,
                    lineno,
                    f"holds a string that is not valid Unicode (a lone surrogate such as "
                    f"\\ud800 in {bad[:40]!r}); fix the \\u escapes",
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
    if isinstance(value, int | float) and not isinstance(value, bool) and key in ("_id", "id"):
        return str(value)
    if not isinstance(value, str):
        raise CorpusFormatError(
            path, lineno, f"field {key!r} must be a string, got {type(value).__name__}"
        )
    if key in ("_id", "id") and not value.strip():
        # An empty id used to become the line number, which could be another line's id.
        raise CorpusFormatError(
            path,
            lineno,
            f"field {key!r} is empty; give the document an id, or leave the field out"
            + (" (the line number is used then)" if key == "id" else ""),
        )
    return value


#: Characters JSON writes as two bytes (a backslash and a letter or themselves); the
#: other control characters below U+0020 take six (a backslash, ``u`` and four digits).
_SHORT_ESCAPES = '"\\\n\r\t\b\f'
_LONG_ESCAPES = tuple(chr(i) for i in range(32) if chr(i) not in _SHORT_ESCAPES)


def _escaped_bytes(text: str) -> int:
    """Bytes of ``text`` inside a JSON string as ``documents.jsonl`` stores it
    (``ensure_ascii=False``): escaping counts, a NUL byte is six. Counted, not written:
    serialising a 50 MB line of NUL bytes to measure it took 300 MB."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    size += sum(text.count(c) for c in _SHORT_ESCAPES)
    return size + 5 * sum(text.count(c) for c in _LONG_ESCAPES)


def _check_stored(path: Path, lineno: int, text: str, limit: int) -> None:
    """Refuse a text line that would be stored longer than ``limit`` bytes: a line of
    control characters grows up to six times when it is written as JSON (a 100 MB line of
    NUL bytes became a 601 MB ``documents.jsonl``)."""
    if len(text) * 6 > limit and _escaped_bytes(text) > limit:
        raise _long_line(path, lineno, limit, "the text, written as JSON,")


def iter_documents(
    path: str | os.PathLike[str],
    format: CorpusFormat = "auto",
    *,
    max_line_bytes: int | None = None,
) -> Iterator[Document]:
    """Stream documents from a corpus file (or a BEIR folder).

    - ``quest``: ``{"title", "text"}`` per line; the title is the id (QUEST's gold docs
      are titles).
    - ``beir``: ``{"_id", "title", "text"}`` per line (a folder means its corpus.jsonl).
    - ``jsonl``: ``{"text"}`` plus optional ``id``, ``title``, ``metadata``; a missing id
      becomes the line number.
    - ``text``: one document per non-blank line; the id is the line number.

    Every problem (invalid JSON or UTF-8, NaN, a lone surrogate, a wrong field type, an
    empty id, JSON nested deeper than :data:`MAX_JSON_DEPTH`, a line or a stored document
    row longer than ``max_line_bytes``, see :func:`line_limit`) is a
    :class:`CorpusFormatError` naming the file and the line. A UTF-8 byte-order mark at the
    start of the file is dropped.
    """
    for _lineno, doc in _numbered_documents(Path(path), format, max_line_bytes):
        yield doc


def _numbered_documents(
    path: Path, format: CorpusFormat, max_bytes: int | None = None
) -> Iterator[tuple[int, Document]]:
    limit = line_limit(max_bytes)
    if format == "auto":
        format = detect_format(path)
    if path.is_dir():
        path = path / "corpus.jsonl"
    if format == "text":
        for lineno, line in _lines(path, limit):
            if line.strip():
                text = line.rstrip("\r\n")
                _check_stored(path, lineno, text, limit)
                yield lineno, Document(id=str(lineno), text=text)
        return
    if format not in ("quest", "beir", "jsonl"):
        raise ValueError(f"unknown corpus format {format!r}; use quest, beir, jsonl or text")
    for lineno, obj in read_jsonl(path, strict=True, max_line_bytes=limit):
        if format == "quest":
            title = _string_field(path, lineno, obj, "title", True)
            text = _string_field(path, lineno, obj, "text", True)
            yield lineno, Document(id=title, title=title, text=text)
        elif format == "beir":
            yield (
                lineno,
                Document(
                    id=_string_field(path, lineno, obj, "_id", True),
                    title=_string_field(path, lineno, obj, "title", False),
                    text=_string_field(path, lineno, obj, "text", True),
                ),
            )
        else:
            doc_id = _string_field(path, lineno, obj, "id", False) or str(lineno)
            metadata = obj.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise CorpusFormatError(path, lineno, "field 'metadata' must be an object")
            yield (
                lineno,
                Document(
                    id=doc_id,
                    title=_string_field(path, lineno, obj, "title", False),
                    text=_string_field(path, lineno, obj, "text", True),
                    metadata=metadata,
                ),
            )


def load_documents(
    path: str | os.PathLike[str],
    format: CorpusFormat = "auto",
    *,
    max_line_bytes: int | None = None,
) -> list[Document]:
    """Read a whole corpus; duplicate ids are an error naming both lines (see
    :func:`iter_documents` for the other checks)."""
    path = Path(path)
    source = path / "corpus.jsonl" if path.is_dir() else path
    docs: list[Document] = []
    first_line: dict[str, int] = {}
    for lineno, doc in _numbered_documents(path, format, max_line_bytes):
        seen = first_line.setdefault(doc.id, lineno)
        if seen != lineno:
            raise CorpusFormatError(
                source, lineno, f"duplicate document id {doc.id!r} (first at line {seen})"
            )
        docs.append(doc)
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
