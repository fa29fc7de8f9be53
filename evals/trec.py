"""Load a classic TREC-format test collection (documents, topics, qrels), e.g. Vaswani.

Why a loader of our own: the older small collections (Vaswani/NPL, CACM, CRAN ...) ship
as SGML-ish TREC files, not BEIR JSONL, and are the only judged collections on this
machine with ~100 queries, which is what a paired comparison needs to see an effect of a
few points. Nothing is downloaded or copied: the files are read where they lie
(``$LOGIC_RAG_DATA/vaswani`` by default).

Formats read:

- documents: ``<DOC>`` ... ``<DOCNO>id</DOCNO>`` ... text ... ``</DOC>``; every text line
  of the block other than the DOCNO goes into the document (inner tags such as ``<TEXT>``
  are dropped, their text kept);
- topics: ``<top>`` ... ``<num>id</num>`` (or ``<num> Number: id`` as in TREC ad hoc)
  ... ``<title>`` text ``</title>`` ... ``</top>``; the title is the query;
- qrels: ``qid iteration docid relevance`` separated by whitespace.

A malformed file raises :class:`~logic_rag.errors.CorpusFormatError` naming the file and
line, because a silently skipped document or judgement changes every score computed later.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from logic_rag.errors import CorpusFormatError

__all__ = [
    "TrecCollection",
    "load_trec_documents",
    "load_trec_topics",
    "load_trec_qrels",
    "load_trec_collection",
    "load_vaswani",
]

_TAG = re.compile(r"<(/?)([A-Za-z]+)[^>]*>")


@dataclass(frozen=True)
class TrecCollection:
    """A judged collection: ``corpus`` {docno: text}, ``queries`` {qid: text},
    ``qrels`` {qid: {docno: grade}}; ``files`` are the paths read (for checksums)."""

    corpus: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    files: tuple[Path, ...]


def _read_lines(path: Path) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise CorpusFormatError(path, None, "file not found")
    with path.open(encoding="utf-8", errors="strict") as handle:
        try:
            for lineno, line in enumerate(handle, start=1):
                yield lineno, line.rstrip("\n").rstrip("\r")
        except UnicodeDecodeError as exc:
            raise CorpusFormatError(path, None, f"not UTF-8 text ({exc})") from exc


def _pieces(line: str) -> Iterator[tuple[str, str]]:
    """Split a line into ("tag", "/name" or "name") and ("text", ...) pieces, in order."""
    pos = 0
    for m in _TAG.finditer(line):
        if m.start() > pos:
            yield "text", line[pos : m.start()]
        yield "tag", m.group(1) + m.group(2).lower()
        pos = m.end()
    if pos < len(line):
        yield "text", line[pos:]


def load_trec_documents(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read ``<DOC>`` blocks into {docno: text} (whitespace collapsed), in file order."""
    path = Path(path)
    docs: dict[str, str] = {}
    start: int | None = None  # line of the open <DOC>, None outside a block
    docno: str | None = None
    in_docno = False
    text: list[str] = []
    for lineno, line in _read_lines(path):
        for kind, value in _pieces(line):
            if kind == "tag" and value == "doc":
                if start is not None:
                    raise CorpusFormatError(
                        path, lineno, f"<DOC> inside the <DOC> opened on line {start}"
                    )
                start, docno, text = lineno, None, []
            elif kind == "tag" and value == "/doc":
                if start is None:
                    raise CorpusFormatError(path, lineno, "</DOC> without an open <DOC>")
                if in_docno:
                    raise CorpusFormatError(path, lineno, "</DOC> inside an open <DOCNO>")
                if not docno:
                    raise CorpusFormatError(
                        path, lineno, f"the <DOC> opened on line {start} has no <DOCNO>"
                    )
                if docno in docs:
                    raise CorpusFormatError(path, lineno, f"DOCNO {docno!r} appears twice")
                docs[docno] = " ".join(" ".join(text).split())
                start, docno = None, None
            elif start is None:
                if kind == "text" and value.strip():
                    raise CorpusFormatError(path, lineno, "text outside a <DOC> block")
            elif kind == "tag" and value == "docno":
                if docno is not None:
                    raise CorpusFormatError(path, lineno, "a second <DOCNO> in one <DOC>")
                in_docno, docno = True, ""
            elif kind == "tag" and value == "/docno":
                if not in_docno:
                    raise CorpusFormatError(path, lineno, "</DOCNO> without <DOCNO>")
                in_docno = False
                docno = (docno or "").strip()
                if not docno:
                    raise CorpusFormatError(path, lineno, "empty <DOCNO>")
            elif kind == "text":
                if in_docno:
                    docno = (docno or "") + value
                else:
                    text.append(value)
    if start is not None:
        raise CorpusFormatError(path, start, "<DOC> opened here is never closed")
    if not docs:
        raise CorpusFormatError(path, None, "no <DOC> block found")
    return docs


_NUM_PREFIX = re.compile(r"^\s*(?:Number\s*:)?\s*", re.IGNORECASE)


def load_trec_topics(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read ``<top>`` blocks into {qid: title text} (whitespace collapsed)."""
    path = Path(path)
    topics: dict[str, str] = {}
    start: int | None = None
    field: str | None = None  # "num" or "title" while their text is being read
    num: list[str] = []
    title: list[str] = []
    for lineno, line in _read_lines(path):
        for kind, value in _pieces(line):
            if kind == "tag" and value == "top":
                if start is not None:
                    raise CorpusFormatError(
                        path, lineno, f"<top> inside the <top> opened on line {start}"
                    )
                start, field, num, title = lineno, None, [], []
            elif kind == "tag" and value == "/top":
                if start is None:
                    raise CorpusFormatError(path, lineno, "</top> without an open <top>")
                qid = _NUM_PREFIX.sub("", " ".join(num)).strip()
                query = " ".join(" ".join(title).split())
                if not qid:
                    raise CorpusFormatError(path, start, "topic without a <num>")
                if not query:
                    raise CorpusFormatError(path, start, f"topic {qid!r} has an empty <title>")
                if qid in topics:
                    raise CorpusFormatError(path, lineno, f"topic number {qid!r} appears twice")
                topics[qid] = query
                start, field = None, None
            elif start is None:
                if kind == "text" and value.strip():
                    raise CorpusFormatError(path, lineno, "text outside a <top> block")
            elif kind == "tag":
                name = value.lstrip("/")
                # <num> text often runs to the next tag without a closing </num>.
                field = name if (not value.startswith("/") and name in ("num", "title")) else None
            elif field == "num":
                num.append(value)
            elif field == "title":
                title.append(value)
    if start is not None:
        raise CorpusFormatError(path, start, "<top> opened here is never closed")
    if not topics:
        raise CorpusFormatError(path, None, "no <top> block found")
    return topics


def load_trec_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """Read ``qid iter docid grade`` lines into {qid: {docid: grade}}; blank lines skipped."""
    path = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    for lineno, line in _read_lines(path):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise CorpusFormatError(
                path, lineno, f"expected 4 fields 'qid iter docid grade', got {len(fields)}"
            )
        qid, _, docid, grade = fields
        try:
            value = int(grade)
        except ValueError:
            raise CorpusFormatError(
                path, lineno, f"relevance grade {grade!r} is not an integer"
            ) from None
        previous = qrels.setdefault(qid, {}).get(docid)
        if previous is not None and previous != value:
            raise CorpusFormatError(
                path, lineno, f"({qid}, {docid}) judged twice with different grades"
            )
        qrels[qid][docid] = value
    if not qrels:
        raise CorpusFormatError(path, None, "no judgement found")
    return qrels


def load_trec_collection(
    folder: str | os.PathLike[str],
    *,
    docs: str = "doc-text.trec",
    topics: str = "query-text.trec",
    qrels: str = "qrels",
) -> TrecCollection:
    """Load documents, topics and qrels from ``folder`` and check they refer to each other.

    A judgement of an unknown document or topic is an error (``file:line`` of the first
    one): dropping it would silently lower recall or change the query set.
    """
    root = Path(folder)
    paths = (root / docs, root / topics, root / qrels)
    corpus = load_trec_documents(paths[0])
    queries = load_trec_topics(paths[1])
    judged = load_trec_qrels(paths[2])
    for lineno, line in _read_lines(paths[2]):
        fields = line.split()
        if not fields:
            continue
        if fields[0] not in queries:
            raise CorpusFormatError(paths[2], lineno, f"topic {fields[0]!r} is not in {topics}")
        if fields[2] not in corpus:
            raise CorpusFormatError(paths[2], lineno, f"document {fields[2]!r} is not in {docs}")
    return TrecCollection(corpus=corpus, queries=queries, qrels=judged, files=paths)


def load_vaswani(folder: str | os.PathLike[str] | None = None) -> TrecCollection:
    """The Vaswani (NPL) collection: 11,429 abstracts, 93 topics, 2,083 binary qrels.

    ``folder`` defaults to ``$LOGIC_RAG_DATA/vaswani``
    (:func:`logic_rag.paths.shared_data_dir`).
    """
    if folder is None:
        from logic_rag.paths import shared_data_dir

        folder = shared_data_dir() / "vaswani"
    if not Path(folder).is_dir():
        raise FileNotFoundError(
            f"Vaswani collection not found at {folder}; set LOGIC_RAG_DATA to the shared data "
            "folder (it must hold vaswani/doc-text.trec, query-text.trec and qrels)"
        )
    return load_trec_collection(folder)
