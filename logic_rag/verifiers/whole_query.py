"""The whole-query LLM check: one yes/no per page, the query itself as the question.

This is what LlamaIndex's ``LLMRerank`` or a pointwise RankGPT does with a yes/no model,
run with the same LLM, prompt and page text as the constraint checks, so that the
decomposed checks (``quality``) are compared with it at equal LLM calls. The stage fills
the signal ``query_verdict`` (P(yes)) for every candidate it is given; put a ``Cutoff``
before it to check only the best ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch
from logic_rag.verifiers.base import CheckRequest, Verifier

__all__ = ["WholeQueryVerify", "WholeQueryTruth", "QUERY_VERDICT"]

#: The signal this stage fills.
QUERY_VERDICT = "query_verdict"


@dataclass(frozen=True)
class WholeQueryVerify(Stage):
    """Signal ``query_verdict``: the verifier's P(yes) for (whole query, page)."""

    verifier: Verifier

    needs: ClassVar[frozenset[str]] = frozenset({"candidates"})
    fills: ClassVar[frozenset[str]] = frozenset({f"signals.{QUERY_VERDICT}"})

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        self.verifier.prepare([q.plan.text for q in batch], ctx)

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        from logic_rag.verifiers.certified import verifier_stats

        states = [s for s in batch if len(s.candidates)]
        if not states:
            return
        start = time.perf_counter()
        before = verifier_stats(self.verifier).get("prompt_tokens", 0)
        requests = [CheckRequest((s.plan.text,), s.candidates) for s in states]
        checked = self.verifier.check(requests, ctx)
        seconds = time.perf_counter() - start
        tokens = verifier_stats(self.verifier).get("prompt_tokens", 0) - before
        total = sum(len(s.candidates) for s in states)
        for state, result in zip(states, checked, strict=True):
            verdicts = np.asarray(result.probs, np.float64)[0]
            # An unusable answer (NaN: neither Yes nor No) is no verdict: 0.5 says nothing.
            unusable = ~np.isfinite(verdicts)
            state.set_signal(QUERY_VERDICT, np.where(unusable, 0.5, verdicts))
            share = len(state.candidates) / total
            state.info["llm"] = {
                "calls": len(state.candidates),
                "all_pairs_calls": len(state.candidates),
                "prompt_tokens": int(round(tokens * share)),
                "seconds": round(seconds * share, 3),
                "question": "whole query",
                "unusable": int(unusable.sum()),
            }


@dataclass(frozen=True)
class WholeQueryTruth(Stage):
    """Put each page's kept whole-query verdict (the signal ``query_truth`` that
    :class:`~logic_rag.verifiers.certified.CertifiedTopK` fills with ``whole_query=True``)
    in place of its soft truth; pages without one keep the truth of their constraints.
    Goes between ``SoftLogic`` and ``Combine``, so the ranking is the one certified."""

    needs: ClassVar[frozenset[str]] = frozenset({"signals.truth", "signals.query_truth"})
    fills: ClassVar[frozenset[str]] = frozenset({"signals.truth"})

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        from logic_rag.verifiers.certified import QUERY_TRUTH

        for state in batch:
            fixed = state.signals.get(QUERY_TRUTH)
            truth = state.signals.get("truth")
            if fixed is None or truth is None:
                continue
            state.set_signal("truth", np.where(np.isfinite(fixed), fixed, truth))
