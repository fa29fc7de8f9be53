"""Logic stages: turn per-atom evidence into one score per candidate.

:class:`SoftLogic` evaluates the query's logic over the verifiers' probabilities with a
fuzzy t-norm (signal ``truth``, in [0, 1]); :class:`ScoreFusion` is the simpler baseline
that adds, multiplies and subtracts raw similarities (signal ``fusion``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from logic_rag.compose.soft_logic import TNorm, fuse_scores, soft_truth
from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch

__all__ = ["SoftLogic", "ScoreFusion"]


@dataclass(frozen=True)
class SoftLogic(Stage):
    """Signal ``truth``: the degree to which each candidate satisfies the query's logic."""

    tnorm: TNorm = "product"

    needs: ClassVar[frozenset[str]] = frozenset({"probs"})
    fills: ClassVar[frozenset[str]] = frozenset({"signals.truth"})

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            if state.probs is None:
                continue
            by_atom = {a.text: state.probs[i] for i, a in enumerate(state.plan.atoms)}
            state.set_signal("truth", soft_truth(state.plan.logic, by_atom, self.tnorm))
            # Say when no candidate meets a constraint: a ✓/✗ list would not show it.
            negated = state.plan.negated
            unmet = [
                f"NOT {a.text}" if a in negated else a.text
                for i, a in enumerate(state.plan.atoms)
                if len(state.candidates)
                and (
                    (state.probs[i] >= 0.5).all() if a in negated else (state.probs[i] < 0.5).all()
                )
            ]
            if unmet:
                state.info["no_candidate_satisfies"] = unmet
            else:
                state.info.pop("no_candidate_satisfies", None)


@dataclass(frozen=True)
class ScoreFusion(Stage):
    """Signal ``fusion``: AND ``+`` (or ``×``), OR max, NOT ``−`` over raw evidence."""

    op: Literal["sum", "product"] = "sum"
    negation_weight: float = 1.0

    needs: ClassVar[frozenset[str]] = frozenset({"evidence"})
    fills: ClassVar[frozenset[str]] = frozenset({"signals.fusion"})

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            if state.evidence is None:
                continue
            raw = {a.text: state.evidence[i] for i, a in enumerate(state.plan.atoms)}
            fused = fuse_scores(
                state.plan.logic, raw, op=self.op, negation_weight=self.negation_weight
            )
            state.set_signal("fusion", fused)
