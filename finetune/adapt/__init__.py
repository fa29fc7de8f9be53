"""``logic-rag adapt``: the LLM as teacher for a user's own corpus, with no gold labels.

* :mod:`.driver`: :func:`adapt` runs the phases below, resumable at every step.
* :mod:`.state`: :class:`AdaptSettings` and the run's ``state.json``.
* :mod:`.atoms`: atoms from questions (rules) or named by the teacher for sampled pages.
* :mod:`.labels`: the candidate plan and the teacher's verdicts, appended and resumable.
* :mod:`.composed`: AND / OR / NOT training queries by set algebra over the verdicts.
* :mod:`.training`: the bi-encoder and the cross-encoder via the existing recipes.
* :mod:`.calibration`: isotonic map from the embedding evidence to P(teacher says yes).
* :mod:`.card`: the folder's ``README.md``.
* :mod:`.gold`: :class:`KnownSetsVerifier`, the gold-label control (same plan, known sets).

Names resolve lazily (PEP 562): importing this package imports neither torch nor
sentence-transformers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "adapt": "driver",
    "AdaptResult": "driver",
    "DEFAULT_TEACHER": "driver",
    "AdaptError": "state",
    "AdaptSettings": "state",
    "PHASES": "state",
    "compose_queries": "composed",
    "load_calibration": "calibration",
    "KnownSetsVerifier": "gold",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .calibration import load_calibration
    from .composed import compose_queries
    from .driver import DEFAULT_TEACHER, AdaptResult, adapt
    from .gold import KnownSetsVerifier
    from .state import PHASES, AdaptError, AdaptSettings


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
