"""Lexical answer metrics as ALCE computes them: ROUGE-Lsum and ASQA's STR-EM.

* :func:`rouge_lsum`: ``rouge_score.RougeScorer(["rougeLsum"], use_stemmer=True)`` F1,
  maximised over the references, with citation markers removed from the prediction (ALCE
  scores outputs after ``remove_citations``). ROUGE-Lsum computes a union LCS per reference
  sentence, so sentences must be on separate lines; ALCE uses nltk's ``sent_tokenize``, for
  which no data is available offline, so sentences are split here with a regex
  (:func:`~logic_rag.evals.rag.pool.split_sentences`). Scores are in [0, 1] (ALCE prints
  them x100) and can differ slightly from ALCE's where nltk splits differently.
* :func:`exact_match_recall`: ASQA STR-EM (Stelmakh et al. 2022, ALCE's ``str_em``): the
  share of disambiguated questions for which some short answer occurs, after SQuAD
  normalisation, as a substring of the normalised prediction.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .datasets import strip_citations
from .pool import split_sentences

__all__ = [
    "rouge_lsum",
    "normalize_answer",
    "exact_match_recall",
    "sentences_per_line",
    "answer_words",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


@lru_cache(maxsize=1)
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)


def sentences_per_line(text: str) -> str:
    """``text`` with one sentence per line, the layout ROUGE-Lsum expects."""
    return "\n".join(split_sentences(text))


def rouge_lsum(
    prediction: str, references: Sequence[str], *, remove_citations: bool = True
) -> float:
    """ROUGE-Lsum F1 of ``prediction`` against its best reference, in [0, 1].

    An empty prediction scores 0. ``references`` must not be empty: an example without a
    reference has no ROUGE, which the caller should record as missing, not as 0.
    """
    if isinstance(references, str):
        raise TypeError("references must be a sequence of strings, not one string")
    refs = [r for r in references if r and r.strip()]
    if not refs:
        raise ValueError("rouge_lsum needs at least one non-empty reference")
    if remove_citations:
        prediction = strip_citations(prediction)
    pred = sentences_per_line(prediction)
    if not pred:
        return 0.0
    scorer = _scorer()
    return max(scorer.score(sentences_per_line(ref), pred)["rougeLsum"].fmeasure for ref in refs)


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lower case, drop punctuation and articles, squeeze whitespace."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match_recall(prediction: str, short_answers: Sequence[Sequence[str]]) -> float:
    """ASQA STR-EM: share of answer groups with an alternative inside the prediction.

    Each group lists the acceptable alternatives for one disambiguated question. The
    match is a substring test on normalised text, as in ALCE's ``exact_presence``.
    Alternatives that normalise to nothing are ignored (ALCE would count them as a hit,
    because the empty string is in every text); a group with none left never matches.
    """
    if isinstance(short_answers, str) or any(isinstance(g, str) for g in short_answers):
        raise TypeError("short_answers must be a sequence of groups (sequences of strings)")
    if not short_answers:
        raise ValueError("exact_match_recall needs at least one group of short answers")
    pred = normalize_answer(strip_citations(prediction))
    hits = 0
    for group in short_answers:
        alternatives = [normalize_answer(a) for a in group]
        if any(alt and alt in pred for alt in alternatives):
            hits += 1
    return hits / len(short_answers)


def answer_words(prediction: str) -> int:
    """Length of an answer in words, citation markers removed (ALCE reports it per answer)."""
    return len(strip_citations(prediction).split())
