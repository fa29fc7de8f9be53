"""Robust parsers for LLM-judge outputs, plugged into LlamaIndex evaluators.

LlamaIndex's default parsers crash on one-line outputs (``CorrectnessEvaluator`` splits on
the first newline) or only accept one exact format, and downstream reports silently treat
an unparsed score as 0. Small judge models answer in many shapes ("4.5\\nreason",
"Score: 4/5", "[RESULT] 2", "Rating: 3 out of 5", ``{"score": 4}``, chatter around any of
them), so these parsers look for a score in a fixed order of preference and return
``None`` when there is none, when it is out of range, or when a stated scale ("x out of
10") is not the evaluator's. A ``None`` is counted as a parse failure by the runner; it is
never turned into a 0.

Return types follow the evaluators' ``parser_function`` contracts (see
``llama_index/core/evaluation/{correctness,answer_relevancy,pairwise}.py``):

* correctness and answer relevancy: ``(score | None, reasoning | None)``; on failure both
  are ``None`` (``AnswerRelevancyEvaluator`` then sets ``invalid_result``).
* pairwise: ``(passing | None, score | None, feedback | None)``; all ``None`` on failure
  (``PairwiseComparisonEvaluator`` then sets ``invalid_result``).
"""

from __future__ import annotations

import json
import math
import re

__all__ = [
    "CORRECTNESS_RANGE",
    "RELEVANCY_RAW_RANGE",
    "parse_score",
    "parse_correctness",
    "parse_relevancy",
    "parse_pairwise",
]

#: ``CorrectnessEvaluator`` scores 1 (worst) to 5 (best).
CORRECTNESS_RANGE: tuple[float, float] = (1.0, 5.0)
#: ``AnswerRelevancyEvaluator`` asks for 0-2 points (two criteria, one point each) and
#: divides by its threshold 2.0, so the reported score is in [0, 1].
RELEVANCY_RAW_RANGE: tuple[float, float] = (0.0, 2.0)

_NUM = r"([-+]?\d+(?:\.\d+)?)"
_OUT_OF = rf"\s*(?:/|out\s+of)\s*{_NUM}"
_JSON_KEYS = ("score", "rating", "result", "grade")
_RESULT_TAG = re.compile(rf"\[RESULT\]\s*:?\s*{_NUM}(?:{_OUT_OF})?", re.IGNORECASE)
# A number as a judge may write it, exponent included, so "1e1" reads as 10 (out of range,
# a failure) instead of as 1 followed by text.
_NUMBER = r"([-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?)(?![\d.]*\d)"
_LABEL_OUT_OF = rf"\s*(?:/|out\s+of)\s*{_NUMBER}"
# The explicit score field: "Score: 4", "**Score:** 4", "Final score is 4", "score = 4/5".
_SCORE_FIELD = re.compile(
    rf"\b(?:final\s+)?score\b\**\s*(?:is|of)?\s*[:=]?\s*\**\s*{_NUMBER}(?:{_LABEL_OUT_OF})?",
    re.IGNORECASE,
)
# Other labels. "grade", "correctness" and "relevancy" need a ':' or '=' ("a grade 2
# reading level" is not a score).
_LABELLED = re.compile(
    rf"\b(?:final\s+)?(?:(?:rating|result)\b\**\s*(?:is|of)?\s*[:=]?"
    rf"|(?:grade|correctness|relevancy|relevance)\b\**\s*[:=])\s*\**\s*{_NUMBER}"
    rf"(?:{_LABEL_OUT_OF})?",
    re.IGNORECASE,
)
_LEADING = re.compile(
    rf"^\s*\**\s*{_NUM}(?:{_OUT_OF})?\s*\**\.?[ \t]*(?:$|\n|[-\u2013\u2014:,(]\s?)", re.IGNORECASE
)
_FRACTION = re.compile(rf"{_NUM}{_OUT_OF}", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_VERDICT = re.compile(r"\[\[\s*([ABC])\s*\]\]")


def _check(value: float, scale: float | None, low: float, high: float) -> float | None:
    """``value`` if it is finite, on the evaluator's scale and in ``[low, high]``."""
    if scale is not None and not math.isclose(scale, high):
        return None
    if not math.isfinite(value) or not low <= value <= high:
        return None
    return value


def _from_json(text: str) -> tuple[float, float | None] | None:
    for match in _JSON_OBJECT.finditer(text):
        try:
            obj = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        for key, value in obj.items():
            if str(key).lower() not in _JSON_KEYS:
                continue
            if isinstance(value, bool):
                return None
            if isinstance(value, (int, float)):
                return float(value), None
            if isinstance(value, str):
                inner = re.fullmatch(rf"\s*{_NUM}(?:{_OUT_OF})?\s*", value, re.IGNORECASE)
                if inner:
                    scale = float(inner.group(2)) if inner.group(2) else None
                    return float(inner.group(1)), scale
            return None
    return None


# Returned by _candidate for contradictory score fields; fails every range check.
_CONFLICT = (math.nan, None)


def _candidate(text: str, *, last_result_tag: bool) -> tuple[float, float | None] | None:
    """The first score found by the patterns, in order of how explicit they are."""
    found = _from_json(text)
    if found is not None:
        return found
    tags = list(_RESULT_TAG.finditer(text))
    if tags:
        tag = tags[-1] if last_result_tag else tags[0]
        return float(tag.group(1)), float(tag.group(2)) if tag.group(2) else None
    for pattern in (_SCORE_FIELD, _LABELLED):
        fields = {
            (float(m.group(1)), float(m.group(2)) if m.group(2) else None)
            for m in pattern.finditer(text)
        }
        if len(fields) > 1:  # "Score: 4" ... "Score: 2": contradictory, a failure
            return _CONFLICT
        if fields:
            return fields.pop()
    for pattern in (_LEADING, _FRACTION):
        match = pattern.search(text)
        if match:
            return float(match.group(1)), float(match.group(2)) if match.group(2) else None
    for line in text.splitlines():
        match = _LEADING.match(line)
        if match:
            return float(match.group(1)), float(match.group(2)) if match.group(2) else None
    return None


def parse_score(text: str | None, low: float, high: float) -> float | None:
    """A score in ``[low, high]`` read from a judge's free text, or ``None``.

    Preference: a JSON object with a ``score``/``rating``/``result`` key; the last
    ``[RESULT] n``; the explicit ``Score: n`` field; another label (``Rating: n out of m``,
    ``Correctness: n``, ``Grade: n``); a number opening the text; a fraction ``n/m``
    anywhere; a line that is only a number. Two different values in the chosen kind of
    field are contradictory and a failure. A stated denominator must equal ``high``; a
    value outside the range (``1e1`` is 10) is a failure, not clipped.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    found = _candidate(text, last_result_tag=True)
    if found is None:
        return None
    value, scale = found
    return _check(value, scale, low, high)


def _with_reasoning(text: str | None, score: float | None) -> tuple[float | None, str | None]:
    if score is None or text is None:
        return None, None
    return score, text.strip()


def parse_correctness(text: str | None) -> tuple[float | None, str | None]:
    """``CorrectnessEvaluator`` parser: score 1-5 and the judge's text, or ``(None, None)``."""
    return _with_reasoning(text, parse_score(text, *CORRECTNESS_RANGE))


def parse_relevancy(text: str | None) -> tuple[float | None, str | None]:
    """``AnswerRelevancyEvaluator`` parser: raw points 0-2 (the evaluator divides by 2)."""
    return _with_reasoning(text, parse_score(text, *RELEVANCY_RAW_RANGE))


def parse_pairwise(text: str | None) -> tuple[bool | None, float | None, str | None]:
    """``PairwiseComparisonEvaluator`` parser: ``[[A]]`` -> 1.0, ``[[B]]`` -> 0.0, ``[[C]]`` -> 0.5.

    Also accepts a bare final "A"/"B"/"C"/"tie" verdict line. Two different bracketed
    verdicts in one output are contradictory and count as a failure.
    """
    if not isinstance(text, str) or not text.strip():
        return None, None, None
    verdicts = {m.group(1) for m in _VERDICT.finditer(text)}
    if len(verdicts) > 1:
        return None, None, None
    if not verdicts:
        last = text.strip().splitlines()[-1].strip().strip("*.:").strip()
        last = re.sub(r"^(?:final\s+)?(?:verdict|answer|winner)\s*[:=]?\s*", "", last, flags=re.I)
        bare = {"a": "A", "b": "B", "c": "C", "tie": "C", "[a]": "A", "[b]": "B", "[c]": "C"}
        verdict = bare.get(last.lower())
        if verdict is None:
            return None, None, None
    else:
        verdict = verdicts.pop()
    feedback = text.strip()
    if verdict == "A":
        return True, 1.0, feedback
    if verdict == "B":
        return False, 0.0, feedback
    return None, 0.5, feedback
