"""Judges that suit a small model: fixed answers scored by token probability.

A 1.5B judge asked for "a score from 1 to 5 and your reasoning" either gives every answer
the same score or writes something no parser can read. What works better for such a
model (and is what the issue's trials found): ask for exactly one token from a closed set
and read the *probabilities* of the allowed tokens instead of sampling one.

* :class:`Rubric`: the closed answer set (``("Yes", "No")``, ``("0", "1", "2")``,
  ``("1", ..., "5")``) with the value of each answer, and the instruction that asks for
  it. :data:`RUBRICS` holds the set-ups measured against human ratings (see
  ``meta_eval_judges``): a binary correctness question, a 3-level rubric, the 1-5 utility
  scale of ALCE's human raters, and the same with a reference answer.
* :class:`ChoiceJudge`: scores with ``generator.choice_logprobs`` (the
  :class:`~logic_rag.generators.base.ScoresChoices` protocol). The score is the expected
  value under the probabilities renormalised over the allowed answers; ``greedy`` is the
  value of the most likely allowed answer (what grammar-constrained decoding would
  write). There is no text to parse: a judgement *fails* only when the model puts almost
  no probability on any allowed answer (``choice_mass < MIN_CHOICE_MASS``), which is
  counted, never scored.
* :class:`GrammarJudge`: for generators without ``choice_logprobs`` but with grammar
  support, "Score: N" is generated under a GBNF grammar; otherwise free text is parsed
  with :func:`parse_score_line`, which accepts one explicit ``Score: N`` field only.

Prompts put the question and the answer first and the rubric last, so several rubrics on
one item share the prompt prefix (llama.cpp then evaluates only the rubric's tokens).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .judges import METRIC_SCALES

__all__ = [
    "JUDGE_SYSTEM",
    "MIN_CHOICE_MASS",
    "RUBRICS",
    "ChoiceJudge",
    "ChoiceJudges",
    "ChoiceScore",
    "METRIC_RUBRICS",
    "GrammarJudge",
    "Rubric",
    "judge_prompt",
    "parse_score_line",
    "supports_choices",
]

JUDGE_SYSTEM = (
    "You are a strict, fair grader. You read a question and an answer written for it and "
    "grade the answer exactly as instructed, replying with a single token."
)

#: Below this total probability on the allowed answers a judgement counts as failed.
MIN_CHOICE_MASS = 0.01


@dataclass(frozen=True)
class Rubric:
    """A closed set of answers, their values, and the instruction that asks for one."""

    name: str
    instruction: str
    choices: tuple[str, ...]
    values: tuple[float, ...]
    uses_reference: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if len(self.choices) != len(self.values) or len(self.choices) < 2:
            raise ValueError(f"rubric {self.name!r}: need >= 2 choices, one value each")

    @property
    def scale(self) -> tuple[float, float]:
        return (min(self.values), max(self.values))


RUBRICS: dict[str, Rubric] = {
    r.name: r
    for r in (
        Rubric(
            "binary",
            "Is this answer correct and does it actually answer the question? "
            "Reply with exactly one word: Yes or No.",
            ("Yes", "No"),
            (1.0, 0.0),
            description="P(Yes) of a yes/no correctness question",
        ),
        Rubric(
            "likert3",
            "Grade the answer: 0 = wrong, off-topic or unhelpful; 1 = partly correct or "
            "incomplete; 2 = correct, complete and helpful. Reply with one digit: 0, 1 or 2.",
            ("0", "1", "2"),
            (0.0, 1.0, 2.0),
            description="3-level rubric, expected grade",
        ),
        Rubric(
            "likert5",
            "How useful is this answer to the person who asked? 1 = useless or wrong, "
            "2 = mostly unhelpful, 3 = somewhat helpful, 4 = helpful, 5 = fully answers the "
            "question correctly. Reply with one digit from 1 to 5.",
            ("1", "2", "3", "4", "5"),
            (1.0, 2.0, 3.0, 4.0, 5.0),
            description="ALCE's 1-5 utility scale, expected score",
        ),
        Rubric(
            "relevancy",
            "Does this answer address the question that was asked (whether or not it is "
            "correct)? Reply with exactly one word: Yes or No.",
            ("Yes", "No"),
            (1.0, 0.0),
            description="P(Yes) that the answer is on the question's topic",
        ),
        Rubric(
            "binary-ref",
            "Compare the answer with the reference answer. Does the answer agree with the "
            "reference on the main point? Reply with exactly one word: Yes or No.",
            ("Yes", "No"),
            (1.0, 0.0),
            uses_reference=True,
            description="P(Yes) that the answer agrees with a reference answer",
        ),
        Rubric(
            "likert5-ref",
            "Using the reference answer as the truth, how correct is the answer? 1 = wrong, "
            "2 = mostly wrong, 3 = partly correct, 4 = mostly correct, 5 = fully correct. "
            "Reply with one digit from 1 to 5.",
            ("1", "2", "3", "4", "5"),
            (1.0, 2.0, 3.0, 4.0, 5.0),
            uses_reference=True,
            description="1-5 correctness against a reference answer, expected score",
        ),
    )
}


def judge_prompt(rubric: Rubric, question: str, answer: str, reference: str | None = None) -> str:
    """Question, (reference,) answer, then the rubric: shared prefix first."""
    parts = [f"Question: {question.strip()}"]
    if rubric.uses_reference:
        if not reference:
            raise ValueError(f"rubric {rubric.name!r} needs a reference answer")
        parts.append(f"Reference answer: {reference.strip()}")
    parts.append(f"Answer to grade: {answer.strip()}")
    parts.append(rubric.instruction)
    return "\n\n".join(parts)


@dataclass
class ChoiceScore:
    """One judgement from token probabilities.

    ``score`` is the expected value over the allowed answers (``None`` when failed),
    ``greedy`` the value of the most likely one, ``probs`` the renormalised distribution,
    ``choice_mass`` the probability the model put on the allowed answers at all.
    """

    rubric: str
    score: float | None
    greedy: float | None
    probs: dict[str, float] = field(default_factory=dict)
    choice_mass: float = 0.0

    @property
    def parse_failure(self) -> bool:
        return self.score is None

    def to_json(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric,
            "score": self.score,
            "greedy": self.greedy,
            "probs": {k: round(v, 6) for k, v in self.probs.items()},
            "choice_mass": round(self.choice_mass, 6),
        }


def supports_choices(generator: Any) -> bool:
    """True when ``generator`` implements ``choice_logprobs`` (ScoresChoices)."""
    from logic_rag.generators.base import ScoresChoices

    return isinstance(generator, ScoresChoices)


def score_from_logprobs(rubric: Rubric, row: Sequence[float]) -> ChoiceScore:
    """A :class:`ChoiceScore` from one row of ``choice_logprobs`` for ``rubric``."""
    logps = [float(x) for x in row]
    finite = [x for x in logps if math.isfinite(x)]
    if not finite:
        return ChoiceScore(rubric.name, None, None, {}, 0.0)
    top = max(finite)
    weights = [math.exp(x - top) if math.isfinite(x) else 0.0 for x in logps]
    total = sum(weights)
    mass = math.exp(top) * total
    probs = {c: w / total for c, w in zip(rubric.choices, weights, strict=True)}
    best = max(range(len(weights)), key=lambda j: weights[j])
    if mass < MIN_CHOICE_MASS:
        return ChoiceScore(rubric.name, None, None, probs, mass)
    expected = sum(p * v for p, v in zip(probs.values(), rubric.values, strict=True))
    return ChoiceScore(rubric.name, expected, rubric.values[best], probs, mass)


class ChoiceJudge:
    """Score answers with one or more rubrics through ``generator.choice_logprobs``."""

    def __init__(
        self, generator: Any, rubrics: Sequence[str] | None = None, *, system: str = JUDGE_SYSTEM
    ) -> None:
        if not supports_choices(generator):
            raise TypeError(
                f"{getattr(generator, 'name', generator)!r} cannot score choices (no "
                f"choice_logprobs); use GrammarJudge or a LlamaIndex evaluator"
            )
        names = list(rubrics) if rubrics is not None else list(RUBRICS)
        unknown = [n for n in names if n not in RUBRICS]
        if unknown:
            raise ValueError(f"unknown rubric(s) {unknown}; choose from {', '.join(RUBRICS)}")
        self.generator = generator
        self.rubrics = [RUBRICS[n] for n in names]
        self.system = system

    def score(
        self, question: str, answer: str, reference: str | None = None
    ) -> dict[str, ChoiceScore]:
        """Every rubric on one answer (rubrics needing a reference skip when there is none).

        One call per rubric, in order, so a llama.cpp judge reuses the item's prefix.
        """
        out: dict[str, ChoiceScore] = {}
        for rubric in self.rubrics:
            if rubric.uses_reference and not reference:
                continue
            prompt = judge_prompt(rubric, question, answer, reference)
            [row] = self.generator.choice_logprobs([prompt], rubric.choices, system=self.system)
            out[rubric.name] = score_from_logprobs(rubric, row)
        return out


_SCORE_LINE = re.compile(r"^\s*\**\s*score\s*\**\s*[:=]\s*\**\s*([1-5])\s*\**\s*$", re.I | re.M)


def parse_score_line(text: str | None, low: int = 1, high: int = 5) -> int | None:
    """The integer of exactly one ``Score: N`` line in ``text``; ``None`` otherwise.

    Strict on purpose (for constrained or format-following judges): no fallbacks to a
    bare number, and two different ``Score:`` lines are a failure, not a guess.
    """
    if not text:
        return None
    found = {int(m.group(1)) for m in _SCORE_LINE.finditer(text)}
    if len(found) != 1:
        return None
    value = found.pop()
    return value if low <= value <= high else None


SCORE_GRAMMAR = 'root ::= "Score: " [1-5]'


class GrammarJudge:
    """1-5 utility as a ``Score: N`` line, grammar-constrained when the backend allows it."""

    rubric = RUBRICS["likert5"]

    def __init__(self, generator: Any, *, system: str = JUDGE_SYSTEM) -> None:
        self.generator = generator
        self.system = system

    @property
    def constrained(self) -> bool:
        import inspect

        try:
            return "grammar" in inspect.signature(self.generator.generate).parameters
        except (TypeError, ValueError):
            return False

    def score(self, question: str, answer: str, reference: str | None = None) -> dict[str, Any]:
        prompt = judge_prompt(self.rubric, question, answer).replace(
            "Reply with one digit from 1 to 5.", "Reply with exactly 'Score: N' (N from 1 to 5)."
        )
        options: Mapping[str, Any] = {"grammar": SCORE_GRAMMAR} if self.constrained else {}
        [text] = self.generator.generate([prompt], max_tokens=8, system=self.system, **options)
        value = parse_score_line(text)
        return {"score": None if value is None else float(value), "raw": text}


#: Which rubric scores each ``eval rag`` judge metric: (without, with) a reference answer.
#: Without a reference, correctness is ``binary``: the set-up chosen on the dev half of
#: ALCE's 400 human-rated answers (Spearman 0.410 there vs 0.335 for ``likert5``; 0.433,
#: CI 0.31-0.55, on the test half; README "Qwen2.5-1.5B"). Its P(Yes) is mapped linearly
#: onto correctness's 1-5 scale, which leaves every rank correlation unchanged.
METRIC_RUBRICS: dict[str, tuple[str, str]] = {
    "correctness": ("binary", "likert5-ref"),
    "answer_relevancy": ("relevancy", "relevancy"),
}


def to_metric_scale(
    value: float | None, rubric: tuple[float, float], metric: tuple[float, float]
) -> float | None:
    """``value`` on a rubric's ``(low, high)`` scale mapped linearly onto the metric's."""
    if value is None or tuple(rubric) == tuple(metric):
        return value
    (lo, hi), (mlo, mhi) = rubric, metric
    return mlo + (value - lo) * (mhi - mlo) / (hi - lo)


class ChoiceJudges:
    """The ``eval rag`` judges (correctness 1-5, answer relevancy 0-1) from token probabilities.

    A drop-in for :class:`~.judges.Judges` when the judge model implements
    ``choice_logprobs``: ``correctness`` is the expected 1-5 score of the ``likert5-ref``
    rubric (without a reference, ``binary``'s P(Yes) mapped onto 1-5: the set-up chosen on
    ALCE's human ratings, see :data:`METRIC_RUBRICS`), ``answer_relevancy`` P(Yes) of the
    ``relevancy`` rubric. The raw field of each :class:`~.judges.JudgeScore` records the
    rubric and the distribution, so every number says which prompt made it. Pairwise
    comparisons (``--compare``) keep LlamaIndex's ``PairwiseComparisonEvaluator``.
    """

    def __init__(self, generator: Any, *, name: str = "judge", llm: Any | None = None) -> None:
        self.generator = generator
        self.name = name
        self.llm = llm
        self._judge = ChoiceJudge(
            generator, sorted({r for p in METRIC_RUBRICS.values() for r in p})
        )
        self._pairwise: Any = None

    def score(self, metric: str, query: str, response: str, reference: str | None = None) -> Any:
        import json

        from .judges import JudgeScore

        if metric not in METRIC_RUBRICS:
            raise ValueError(f"unknown judge metric {metric!r}; choose from {list(METRIC_RUBRICS)}")
        plain, with_ref = METRIC_RUBRICS[metric]
        rubric = RUBRICS[with_ref if reference else plain]
        prompt = judge_prompt(rubric, query, response, reference)
        [row] = self.generator.choice_logprobs([prompt], rubric.choices, system=self._judge.system)
        scored = score_from_logprobs(rubric, row)
        value = to_metric_scale(scored.score, rubric.scale, METRIC_SCALES[metric])
        return JudgeScore(metric, value, json.dumps(scored.to_json()))

    def score_all(
        self, metrics: Sequence[str], query: str, response: str, reference: str | None = None
    ) -> dict[str, Any]:
        return {m: self.score(m, query, response, reference) for m in metrics}

    def correctness(self, query: str, response: str, reference: str | None = None) -> Any:
        return self.score("correctness", query, response, reference)

    def answer_relevancy(self, query: str, response: str) -> Any:
        return self.score("answer_relevancy", query, response)

    def pairwise(
        self, query: str, answer_a: str, answer_b: str, reference: str | None = None
    ) -> Any:
        if self._pairwise is None:
            from .judges import Judges

            self._pairwise = Judges(self.llm or self.generator.as_llm(), name=self.name)
        return self._pairwise.pairwise(query, answer_a, answer_b, reference)
