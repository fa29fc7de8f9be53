"""OpenMP waiting policy: sleep at barriers instead of spinning, so neighbours do not stall us.

torch's OpenMP threads spin at every barrier by default. On a machine shared with other
busy processes (a 2-core CI runner, a box that also runs an LLM), a spinning thread holds a
core its descheduled sibling needs, and every layer of every batch waits for that sibling's
next time slice. Measured with ``benchmarks.bench_loaded_indexing`` (EmbeddingGemma, 300
QUEST-attr pages, 2 cores, one spinning torch encoder per core beside it): indexing took
270 s with spinning waits against 24 s quiet (11x), and 82 s with ``OMP_WAIT_POLICY=PASSIVE``
against 25 s quiet (3.3x). Quiet, the passive policy costs about 10%.

The policy is read once, when the OpenMP runtime loads (with torch), so
:func:`prefer_passive_waits` only takes effect before torch is imported; a user's own
``OMP_WAIT_POLICY`` is always kept.
"""

from __future__ import annotations

import os
import sys

__all__ = ["prefer_passive_waits"]


def prefer_passive_waits() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless it is set or torch is already loaded.

    Returns whether the policy in force is (now) the passive one.
    """
    current = os.environ.get("OMP_WAIT_POLICY")
    if current is not None:
        return current.strip().upper() == "PASSIVE"
    if "torch" in sys.modules:
        return False
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return True
