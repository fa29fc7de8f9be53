"""Per-atom dense candidates: each positive atom's nearest documents.

A union ("moths or insects of Guadeloupe") or a conjunction whose whole-query embedding
leans on one of its atoms misses documents that only the other atom's neighbourhood
holds; searching every positive atom adds them. Negated atoms add no candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch
from logic_rag.query.algebra import positive_atoms

__all__ = ["AtomCandidates"]


@dataclass(frozen=True)
class AtomCandidates(Stage):
    """The ``depth`` nearest documents of every positive atom (sources ``atom:<text>``).

    Queries with a single atom are left alone (the whole query already searched it).
    """

    depth: int = 300

    #: Sources ``atom:<text>``, one per positive atom (no fixed signal name).
    fills: ClassVar[frozenset[str]] = frozenset({"candidates", "sources"})

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        ctx.want([a.text for q in batch if q.plan.has_logic for a in q.plan.atoms], self.depth)

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            if not state.plan.has_logic:
                continue
            for atom in dict.fromkeys(positive_atoms(state.plan.logic)):
                scores, ids = ctx.search(atom.text, self.depth)
                state.add_candidates(f"atom:{atom.text}", ids, scores)
