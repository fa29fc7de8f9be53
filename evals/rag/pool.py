"""Default retrieval corpora for the RAG datasets (used when the user passes no ``--corpus``).

* ``eli5``: a passage pool chunked (about ``chunk_words`` words, on sentence boundaries)
  from the reference answers of the questions in ``source`` (default: every question of
  the file the examples came from). Each passage records its question in
  ``metadata["source_id"]``; :func:`excluded_for` tells the runner never to retrieve a
  question's own answers for it, since that would measure copying, not retrieval.
* ``asqa``: the Wikipedia text shipped with every question of the file the examples came
  from (knowledge snippets and qa-pair paragraphs, deduplicated): a question's own text is
  its gold, the other questions' text its distractors. ASQA ships no retrieval corpus, and
  ALCE retrieves from a 2018 Wikipedia dump of 21M passages: this corpus is far smaller
  and easier, so its numbers compare retrievers, not with ALCE's.
* ``alce-*``: the union of the documents shipped with the examples.
* ``quest``: the QUEST ``documents.jsonl`` next to the query file (or in the shared
  ``quest`` folder) when present; else an error asking for ``--corpus``.
* ``nq``: NQ-open ships no passages; an error asks for ``--corpus``.

The ELI5 pool is a stand-in for KILT Wikipedia, which the published ELI5 results use:
numbers on it are comparable between retrievers, not with the literature.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from logic_rag.corpus import Document
from logic_rag.errors import LogicRagError
from logic_rag.paths import shared_data_dir

from .datasets import DATASETS, RagExample, load_rag_dataset

__all__ = [
    "NoDefaultCorpusError",
    "default_corpus",
    "describe_corpus",
    "excluded_for",
    "chunk_text",
    "split_sentences",
    "question_key",
]


class NoDefaultCorpusError(LogicRagError):
    """The dataset has no embedded corpus; the user must pass ``--corpus``."""


# A sentence ends at ., ! or ? (optionally followed by one closing quote or bracket) before
# whitespace, or at a line break. Reddit answers use both.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"')\]])\s+|\s*\n\s*")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with a regex (no nltk data is available offline)."""
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part.strip()]


def question_key(question: str) -> str:
    """A question reduced to lower-case letters and digits, to spot re-asked questions."""
    return _NON_ALNUM.sub(" ", question.lower()).strip()


def chunk_text(text: str, chunk_words: int = 100) -> list[str]:
    """Greedy sentence-aligned chunks of at most ``chunk_words`` words.

    Sentences are packed in order while the chunk stays within ``chunk_words`` words; a
    sentence longer than that is cut into ``chunk_words``-word windows. No word is lost
    or repeated: the chunks' words, concatenated, are the text's words.
    """
    if chunk_words < 1:
        raise ValueError(f"chunk_words must be at least 1, got {chunk_words}")
    chunks: list[str] = []
    current: list[str] = []
    for sentence in split_sentences(text):
        words = sentence.split()
        if len(words) > chunk_words:
            if current:
                chunks.append(" ".join(current))
                current = []
            for start in range(0, len(words), chunk_words):
                piece = words[start : start + chunk_words]
                if len(piece) == chunk_words:
                    chunks.append(" ".join(piece))
                else:
                    current = list(piece)  # the remainder may share a chunk with what follows
            continue
        if current and len(current) + len(words) > chunk_words:
            chunks.append(" ".join(current))
            current = []
        current.extend(words)
    if current:
        chunks.append(" ".join(current))
    return chunks


def excluded_for(example: RagExample, doc: Document) -> bool:
    """True when ``doc`` was made from the reference answers of ``example``.

    That is: its own answers, or the answers of a question in the pool with the same
    text (ELI5 has re-asked questions; their answers would leak the reference too). Only
    passages of the ELI5 pool carry ``metadata["answer_of"]``; documents shipped with
    ASQA/ALCE examples are meant to be retrieved for their example and never excluded.
    """
    meta = doc.metadata
    if "answer_of" not in meta:
        return False
    if meta["answer_of"] == example.id:
        return True
    key = meta.get("question_key")
    return bool(key) and key == question_key(example.question)


def _eli5_pool(source: Iterable[RagExample], chunk_words: int) -> list[Document]:
    docs: list[Document] = []
    for ex in source:
        for i, answer in enumerate(ex.answers):
            for j, chunk in enumerate(chunk_text(answer, chunk_words)):
                docs.append(
                    Document(
                        id=f"{ex.id}#a{i}#c{j}",
                        text=chunk,
                        metadata={
                            "source_id": ex.id,
                            "answer_of": ex.id,
                            "question_key": question_key(ex.question),
                            "answer_index": i,
                            "chunk_index": j,
                            "dataset": "eli5",
                        },
                    )
                )
    return docs


def _shipped_documents(name: str, examples: Sequence[RagExample]) -> list[Document]:
    docs: list[Document] = []
    seen_ids: set[str] = set()
    seen_content: set[tuple[str, str]] = set()
    for ex in examples:
        for doc in ex.documents:
            key = (doc.title, doc.text)
            if key in seen_content or doc.id in seen_ids:
                continue  # the same passage shipped with two examples is indexed once
            seen_content.add(key)
            seen_ids.add(doc.id)
            docs.append(doc)
    if not docs:
        raise NoDefaultCorpusError(
            f"the {name} examples ship no documents to retrieve from; "
            "pass --corpus with a corpus file (e.g. KILT Wikipedia passages)"
        )
    return docs


def _quest_documents(examples: Sequence[RagExample]) -> list[Document]:
    from logic_rag.corpus import load_documents

    candidates: list[Path] = []
    for ex in examples[:1]:
        src = ex.metadata.get("source_path")
        if src:
            candidates.append(Path(src).parent / "documents.jsonl")
    candidates.append(shared_data_dir() / "quest" / "documents.jsonl")
    for candidate in candidates:
        if candidate.is_file():
            return load_documents(candidate, "quest")
    looked = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise NoDefaultCorpusError(
        f"no QUEST documents.jsonl found (looked in {looked}); put the official QUEST "
        "documents.jsonl there or pass --corpus with a corpus file"
    )


def describe_corpus(examples: Sequence[RagExample], docs: Sequence[Document]) -> dict[str, int]:
    """Sizes to report with a default corpus: its documents, and how many of them were
    shipped with the evaluated questions (their gold) rather than with other questions."""
    own = {(d.title, d.text) for ex in examples for d in ex.documents}
    gold = sum(1 for d in docs if (d.title, d.text) in own)
    return {
        "documents": len(docs),
        "gold_of_evaluated_questions": gold,
        "distractors": len(docs) - gold,
        "questions_without_gold": sum(1 for ex in examples if not ex.documents),
    }


def default_corpus(
    name: str,
    examples: Sequence[RagExample],
    *,
    source: Sequence[RagExample] | None = None,
    chunk_words: int = 100,
) -> list[Document]:
    """The corpus to retrieve from for ``examples`` of dataset ``name`` without ``--corpus``.

    For ``eli5``, ``source`` are the questions whose answers form the pool (default: the
    whole file ``examples`` came from, read again from ``metadata["source_path"]``); filter
    hits with :func:`excluded_for` so a question never retrieves its own answers.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown RAG dataset {name!r}; choose one of {', '.join(DATASETS)}")
    if name == "nq":
        raise NoDefaultCorpusError(
            "NQ-open ships no passages, so there is no default corpus; pass --corpus with "
            "a corpus file (e.g. the DPR Wikipedia passages in BEIR or JSONL format)"
        )
    if name == "quest":
        return _quest_documents(examples)
    paths = {ex.metadata.get("source_path") for ex in examples}
    known = len(paths) == 1 and None not in paths
    if name == "asqa":
        if source is None:
            # examples built in code have no file: their own documents are the corpus
            source = load_rag_dataset(name, next(iter(paths)), split="all") if known else []
        return _shipped_documents(name, [*examples, *source])
    if name == "eli5" and source is None:
        if not known:
            raise ValueError("cannot tell which ELI5 file the examples came from; pass source=")
        source = load_rag_dataset(name, next(iter(paths)))
    if name == "eli5":
        assert source is not None
        docs = _eli5_pool(source, chunk_words)
        if not docs:
            raise NoDefaultCorpusError("the ELI5 source questions have no answers to pool")
        return docs
    return _shipped_documents(name, examples)
