"""Search as a pipeline of stages: candidates >> verifiers >> logic >> ranking.

:class:`Stage` and :class:`Pipeline` (``a >> b``) compose; :class:`SearchBatch` /
:class:`QueryState` hold what flows between stages; :class:`SearchContext` gives stages
batched, memoised access to the indexes. The stages themselves live in
:mod:`logic_rag.candidates`, :mod:`logic_rag.verifiers`, :mod:`logic_rag.compose.logic` and
:mod:`logic_rag.pipeline.ranking`; named compositions in :mod:`logic_rag.strategies`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Stage": "stage",
    "Pipeline": "stage",
    "QueryPlan": "state",
    "QueryState": "state",
    "SearchBatch": "state",
    "Ranked": "state",
    "SearchContext": "context",
    "Resources": "context",
    "Combine": "ranking",
    "TopK": "ranking",
    "Backfill": "ranking",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .context import Resources, SearchContext
    from .ranking import Backfill, Combine, TopK
    from .stage import Pipeline, Stage
    from .state import QueryPlan, QueryState, Ranked, SearchBatch

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
