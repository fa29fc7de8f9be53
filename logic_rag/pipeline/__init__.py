"""Search as a pipeline of stages: candidates >> verifiers >> logic >> ranking.

:class:`Stage` and :class:`Pipeline` (``a >> b``) compose; :class:`SearchBatch` /
:class:`QueryState` hold what flows between stages; :class:`SearchContext` gives stages
batched, memoised access to the indexes. The stages themselves live in
:mod:`logic_rag.candidates`, :mod:`logic_rag.verifiers`, :mod:`logic_rag.compose.logic` and
:mod:`logic_rag.pipeline.ranking`; named compositions in :mod:`logic_rag.strategies`.
"""

from __future__ import annotations

# Plain imports: these modules need only numpy; the heavy models load inside the stages.
from .context import Resources, SearchContext
from .ranking import Backfill, Combine, TopK
from .stage import Pipeline, Stage
from .state import QueryPlan, QueryState, Ranked, SearchBatch

__all__ = [
    "Backfill",
    "Combine",
    "Pipeline",
    "QueryPlan",
    "QueryState",
    "Ranked",
    "Resources",
    "SearchBatch",
    "SearchContext",
    "Stage",
    "TopK",
]
