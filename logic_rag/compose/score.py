"""A candidate's final score: a fixed prior plus the weighted truth of the query's logic.

    score = Σ weight × signal (the prior) + truth_weight × truth(logic, P(atom); tnorm)

Two stages need that one formula: the final ranking (``SoftLogic(tnorm) >> Combine(prior
+ truth_weight × truth)``) and :class:`~logic_rag.verifiers.certified.CertifiedTopK`,
which bounds the same score to choose which pairs the LLM is asked and to certify the top
k. Both take it from one :class:`Score`, so the pairs asked are those that decide the
ranking that is returned; a pipeline that puts a different ranking after a
``CertifiedTopK`` is refused when it is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from logic_rag.compose.logic import SoftLogic
from logic_rag.compose.soft_logic import TNorm
from logic_rag.pipeline.ranking import Combine
from logic_rag.pipeline.stage import Pipeline

__all__ = ["Score", "TRUTH"]

#: The signal :class:`SoftLogic` fills and the score weighs by ``truth_weight``.
TRUTH = "truth"


@dataclass(frozen=True)
class Score:
    """``prior`` (``(signal, weight)`` pairs) + ``truth_weight`` × truth under ``tnorm``.

    The default is ``quality``'s: the whole-query cosine blended half and half with the
    positive atoms' mean cosine, and 0.75 of the soft truth.
    """

    prior: tuple[tuple[str, float], ...] = (("cosine", 0.5), ("positive_cosine", 0.5))
    truth_weight: float = 0.75
    tnorm: TNorm = "product"

    #: A pipeline file may name this class (``{"type": ..., "init_parameters": ...}``).
    json_loadable: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.truth_weight <= 0:
            raise ValueError("truth_weight must be positive")
        if any(name == TRUTH for name, _ in self.prior):
            raise ValueError(f"the prior holds no {TRUTH!r} term: that weight is truth_weight")

    @classmethod
    def of(cls, logic: SoftLogic, combine: Combine) -> Score:
        """The score that ``logic >> combine`` ranks by (its ``truth`` term, the rest the
        prior, in order)."""
        prior = tuple((n, w) for n, w in combine.weights if n != TRUTH)
        truth = [w for n, w in combine.weights if n == TRUTH]
        if len(truth) != 1 or combine.single is not None:
            raise ValueError(f"{combine.describe()} is not a prior plus one {TRUTH!r} term")
        return cls(prior, truth[0], logic.tnorm)

    def logic(self) -> SoftLogic:
        """The stage that fills the signal ``truth``."""
        return SoftLogic(self.tnorm)

    def combine(self) -> Combine:
        """The stage that adds the weighted truth to the prior (prior terms first, in
        order: the sum is the one :class:`CertifiedTopK` bounds, bit for bit)."""
        return Combine((*self.prior, (TRUTH, self.truth_weight)))

    def ranking(self) -> Pipeline:
        """``SoftLogic >> Combine``: the final ranking by this score."""
        return self.logic() >> self.combine()

    def describe(self) -> str:
        prior = ", ".join(f"{w} {n}" for n, w in self.prior)
        return f"Score({prior} + {self.truth_weight} truth, tnorm={self.tnorm!r})"
