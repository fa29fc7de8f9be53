"""LLM judges: LlamaIndex's own evaluators with an explicit judge LLM and robust parsers.

We use ``CorrectnessEvaluator`` (score 1-5, with a reference answer when the dataset has
one), ``AnswerRelevancyEvaluator`` (0-2 points divided by 2 by the evaluator, so 0-1) and
``PairwiseComparisonEvaluator`` (both orders, ``enforce_consensus=True``) unchanged, so
numbers are comparable with other LlamaIndex users, but pass the parsers of
:mod:`.parsing`: an output with no readable score becomes ``score=None`` and is counted
as a parse failure, never as 0. Each judgement keeps the judge's raw text so failures can
be inspected in ``items.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .parsing import parse_correctness, parse_pairwise, parse_relevancy

__all__ = [
    "JUDGE_METRICS",
    "METRIC_SCALES",
    "JudgeScore",
    "PairwiseVerdict",
    "Judges",
]

#: Pointwise judge metrics this module knows.
JUDGE_METRICS = ("correctness", "answer_relevancy")
#: The scale of each reported judge score.
METRIC_SCALES: dict[str, tuple[float, float]] = {
    "correctness": (1.0, 5.0),
    "answer_relevancy": (0.0, 1.0),
}

Winner = Literal["a", "b", "tie", "inconsistent", "failed"]


@dataclass
class JudgeScore:
    """One pointwise judgement; ``score`` is ``None`` when the output could not be parsed."""

    metric: str
    score: float | None
    raw: str | None

    @property
    def parse_failure(self) -> bool:
        return self.score is None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PairwiseVerdict:
    """Which of two answers the judge preferred after judging both orders.

    ``winner`` is ``"a"``/``"b"`` when the two orders agree (or one says tie and the other
    picks a side), ``"tie"`` when both say tie, ``"inconsistent"`` when the verdict flips
    with the order (position bias), ``"failed"`` when an output could not be parsed.
    """

    winner: Winner
    raw: list[str] = field(default_factory=list)

    @property
    def preference_a(self) -> float | None:
        """1 if A won, 0 if B won, 0.5 for tie or inconsistent, ``None`` if failed."""
        return {"a": 1.0, "b": 0.0, "tie": 0.5, "inconsistent": 0.5}.get(self.winner)

    def to_json(self) -> dict[str, Any]:
        return {"winner": self.winner, "raw": list(self.raw)}


class _Recorder:
    """Wraps a parser and keeps every raw judge output it sees."""

    def __init__(self, parser: Callable[[str], Any]) -> None:
        self.parser = parser
        self.outputs: list[str] = []

    def __call__(self, text: str) -> Any:
        self.outputs.append(text)
        return self.parser(text)

    def take(self) -> list[str]:
        outputs, self.outputs = self.outputs, []
        return outputs


class Judges:
    """The three LlamaIndex evaluators bound to one judge LLM.

    ``llm`` is any LlamaIndex LLM (``make_generator(spec).as_llm()``); it is required so
    the evaluators never fall back to OpenAI.
    """

    def __init__(self, llm: Any, *, name: str = "judge") -> None:
        if llm is None:
            raise ValueError(
                "Judges needs an explicit judge llm (e.g. make_generator(spec).as_llm())"
            )
        from llama_index.core.evaluation import (
            AnswerRelevancyEvaluator,
            CorrectnessEvaluator,
            PairwiseComparisonEvaluator,
        )

        self.llm = llm
        self.name = name
        self._correctness_parser = _Recorder(parse_correctness)
        self._relevancy_parser = _Recorder(parse_relevancy)
        self._pairwise_parser = _Recorder(parse_pairwise)
        self.correctness_evaluator = CorrectnessEvaluator(
            llm=llm, parser_function=self._correctness_parser
        )
        self.relevancy_evaluator = AnswerRelevancyEvaluator(
            llm=llm, parser_function=self._relevancy_parser
        )
        self.pairwise_evaluator = PairwiseComparisonEvaluator(
            llm=llm, parser_function=self._pairwise_parser, enforce_consensus=True
        )

    def correctness(self, query: str, response: str, reference: str | None = None) -> JudgeScore:
        """Correctness 1-5 of ``response`` (against ``reference`` when given)."""
        self._correctness_parser.take()
        result = self.correctness_evaluator.evaluate(
            query=query, response=response, reference=reference
        )
        raw = self._correctness_parser.take()
        return JudgeScore("correctness", _score(result), raw[-1] if raw else None)

    def answer_relevancy(self, query: str, response: str) -> JudgeScore:
        """Answer relevancy 0-1 (the evaluator's 0-2 points divided by 2)."""
        self._relevancy_parser.take()
        result = self.relevancy_evaluator.evaluate(query=query, response=response)
        raw = self._relevancy_parser.take()
        score = None if result.invalid_result else _score(result)
        return JudgeScore("answer_relevancy", score, raw[-1] if raw else None)

    def score(
        self, metric: str, query: str, response: str, reference: str | None = None
    ) -> JudgeScore:
        """Dispatch to one of :data:`JUDGE_METRICS`."""
        if metric == "correctness":
            return self.correctness(query, response, reference)
        if metric == "answer_relevancy":
            return self.answer_relevancy(query, response)
        raise ValueError(f"unknown judge metric {metric!r}; choose from {', '.join(JUDGE_METRICS)}")

    def score_all(
        self,
        metrics: Sequence[str],
        query: str,
        response: str,
        reference: str | None = None,
    ) -> dict[str, JudgeScore]:
        return {m: self.score(m, query, response, reference) for m in metrics}

    def pairwise(
        self, query: str, answer_a: str, answer_b: str, reference: str | None = None
    ) -> PairwiseVerdict:
        """Judge A against B in both orders; see :class:`PairwiseVerdict`."""
        from llama_index.core.evaluation.pairwise import EvaluationSource

        self._pairwise_parser.take()
        result = self.pairwise_evaluator.evaluate(
            query=query, response=answer_a, second_response=answer_b, reference=reference
        )
        raw = self._pairwise_parser.take()
        if result.invalid_result or result.score is None:
            return PairwiseVerdict("failed", raw)
        source = result.pairwise_source
        if source == EvaluationSource.NEITHER:
            return PairwiseVerdict("inconsistent", raw)
        if result.score == 0.5:
            return PairwiseVerdict("tie", raw)
        a_won = result.score == 1.0
        if source == EvaluationSource.FLIPPED:
            a_won = not a_won
        return PairwiseVerdict("a" if a_won else "b", raw)


def _score(result: Any) -> float | None:
    score = getattr(result, "score", None)
    return None if score is None else float(score)
