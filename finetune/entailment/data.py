"""Training pairs for entailment tuning: SNLI, MNLI and (passage, claim) from MS MARCO.

Why: the method mixes NLI entailment pairs with retrieval pairs whose hypothesis is the
existence claim of the query (:func:`question_to_claim`). Retrieval pairs come only from
the *train* side of a fixed split of the MS MARCO queries (:func:`split_queries`, a hash of
the query id), so the later retrieval experiment can evaluate on the test side without
leakage. Every malformed line raises :class:`CorpusFormatError` naming file and line.
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from logic_rag.errors import CorpusFormatError

__all__ = [
    "NLI_LABELS",
    "NLIPair",
    "ClaimPair",
    "detokenize",
    "load_snli",
    "load_mnli",
    "load_beir_corpus",
    "load_beir_queries",
    "load_beir_qrels",
    "split_queries",
    "msmarco_claim_pairs",
]

NLI_LABELS = ("entailment", "neutral", "contradiction")


@dataclass(frozen=True)
class NLIPair:
    """One NLI example (text detokenised)."""

    premise: str
    hypothesis: str
    label: str


@dataclass(frozen=True)
class ClaimPair:
    """A relevant passage and the existence claim of the query it answers."""

    query_id: str
    doc_id: str
    passage: str
    claim: str
    rule: str


_SPACE_BEFORE = re.compile(r" +([.,!?;:%)\]}]|'s\b|'re\b|'ve\b|'ll\b|'d\b|'m\b|n't\b)")
_SPACE_AFTER = re.compile(r"([(\[{$]) +")


def detokenize(text: str) -> str:
    """Undo PTB-style spacing lightly: "holding packages ." -> "holding packages."."""
    text = _SPACE_BEFORE.sub(r"\1", text.strip())
    text = _SPACE_AFTER.sub(r"\1", text)
    return re.sub(r" {2,}", " ", text)


def _json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    from logic_rag.corpus import read_jsonl

    yield from read_jsonl(path)


def _check_label(path: Path, lineno: int, label: object) -> str:
    if label not in NLI_LABELS:
        raise CorpusFormatError(path, lineno, f"label {label!r} is not one of {NLI_LABELS}")
    return str(label)


def load_snli(path: str | Path, *, entailment_only: bool = True) -> list[NLIPair]:
    """SNLI JSONL ``{"premise","hypothesis","label"}``; only entailment pairs by default."""
    path = Path(path)
    pairs = []
    for lineno, row in _json_lines(path):
        premise, hypothesis = row.get("premise"), row.get("hypothesis")
        if not isinstance(premise, str) or not isinstance(hypothesis, str):
            raise CorpusFormatError(path, lineno, 'needs string "premise" and "hypothesis"')
        label = _check_label(path, lineno, row.get("label"))
        if entailment_only and label != "entailment":
            continue
        pairs.append(NLIPair(detokenize(premise), detokenize(hypothesis), label))
    return pairs


def load_mnli(path: str | Path, *, entailment_only: bool = True) -> list[NLIPair]:
    """MNLI tsv with a header naming ``premise``, ``hypothesis`` and ``gold_label``.

    Read with ``csv.QUOTE_NONE``: MNLI text contains unbalanced quotes, and default quoting
    silently merges rows.
    """
    path = Path(path)
    pairs = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise CorpusFormatError(path, 1, "empty file; expected a header row")
        need = ("premise", "hypothesis", "gold_label")
        if not all(col in header for col in need):
            raise CorpusFormatError(path, 1, f"header must name {need}, got {header}")
        ip, ih, il = (header.index(col) for col in need)
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise CorpusFormatError(
                    path, lineno, f"expected {len(header)} tab-separated fields, got {len(row)}"
                )
            label = _check_label(path, lineno, row[il])
            if entailment_only and label != "entailment":
                continue
            pairs.append(NLIPair(row[ip].strip(), row[ih].strip(), label))
    return pairs


def load_beir_corpus(path: str | Path) -> dict[str, str]:
    """BEIR corpus.jsonl -> {doc id: "title. text"} (title dropped when empty)."""
    path = Path(path)
    docs: dict[str, str] = {}
    for lineno, row in _json_lines(path):
        doc_id, text = row.get("_id"), row.get("text")
        if not isinstance(doc_id, str) or not isinstance(text, str):
            raise CorpusFormatError(path, lineno, 'needs string "_id" and "text"')
        title = row.get("title") or ""
        if not isinstance(title, str):
            raise CorpusFormatError(path, lineno, '"title" must be a string')
        docs[doc_id] = f"{title.strip()}. {text.strip()}" if title.strip() else text.strip()
    return docs


def load_beir_queries(path: str | Path) -> dict[str, str]:
    """BEIR queries.jsonl -> {query id: text}."""
    path = Path(path)
    queries: dict[str, str] = {}
    for lineno, row in _json_lines(path):
        qid, text = row.get("_id"), row.get("text")
        if not isinstance(qid, str) or not isinstance(text, str) or not text.strip():
            raise CorpusFormatError(path, lineno, 'needs string "_id" and non-empty "text"')
        queries[qid] = text.strip()
    return queries


def load_beir_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """BEIR qrels tsv (query-id, corpus-id, score; header optional) -> {qid: {docid: grade}}."""
    path = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if lineno == 1 and fields[0] == "query-id":
                continue
            if len(fields) != 3:
                raise CorpusFormatError(
                    path, lineno, f"expected 3 tab-separated fields, got {len(fields)}"
                )
            try:
                grade = int(fields[2])
            except ValueError:
                raise CorpusFormatError(
                    path, lineno, f"score {fields[2]!r} is not an integer"
                ) from None
            qrels.setdefault(fields[0], {})[fields[1]] = grade
    return qrels


def split_queries(
    query_ids: Iterable[str], *, test_fraction: float = 0.3, salt: str = "logic-rag-entailment-v1"
) -> tuple[list[str], list[str]]:
    """Deterministic (train, test) split by a SHA-256 hash of ``salt:query_id``.

    A query's side depends only on its id and the salt, never on which other queries are
    present or their order, so every tool that reuses the split agrees.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    train, test = [], []
    for qid in sorted(set(query_ids)):
        digest = hashlib.sha256(f"{salt}:{qid}".encode()).digest()
        bucket = int.from_bytes(digest[:8], "big") / 2**64
        (test if bucket < test_fraction else train).append(qid)
    return train, test


def msmarco_claim_pairs(
    beir_dir: str | Path,
    *,
    split: str = "train",
    min_grade: int = 2,
    test_fraction: float = 0.3,
    max_per_query: int | None = None,
) -> list[ClaimPair]:
    """(passage, claim) pairs for queries on one side of :func:`split_queries`.

    ``min_grade`` 2 keeps "highly relevant" and "perfectly relevant" TREC-DL grades; grade 1
    ("related") passages often do not entail the claim. Pairs are ordered by query id, then
    grade (best first), then doc id.
    """
    from logic_rag.finetune.entailment.claims import question_to_claim

    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    beir_dir = Path(beir_dir)
    corpus = load_beir_corpus(beir_dir / "corpus.jsonl")
    queries = load_beir_queries(beir_dir / "queries.jsonl")
    qrels = load_beir_qrels(beir_dir / "qrels" / "test.tsv")
    judged = [q for q in qrels if q in queries]
    train, test = split_queries(judged, test_fraction=test_fraction)
    chosen = train if split == "train" else test
    pairs = []
    for qid in chosen:
        claim = question_to_claim(queries[qid])
        ranked = sorted(
            ((g, d) for d, g in qrels[qid].items() if g >= min_grade and d in corpus),
            key=lambda gd: (-gd[0], gd[1]),
        )
        if max_per_query is not None:
            ranked = ranked[:max_per_query]
        pairs.extend(ClaimPair(qid, d, corpus[d], claim.text, claim.rule) for _, d in ranked)
    return pairs
