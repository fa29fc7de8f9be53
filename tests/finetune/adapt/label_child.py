"""Run ``adapt`` up to the labels with a scripted teacher that can kill its own process.

Used by ``test_resume.py`` as ``python label_child.py INDEX QUERIES OUT KILL_AFTER [BATCH]``: with
KILL_AFTER > 0 the process sends itself SIGKILL (no cleanup, no flush) when the teacher is
asked to score a batch that would take it past KILL_AFTER pairs.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from logic_rag.finetune.adapt import AdaptSettings, adapt
from logic_rag.verifiers.base import PairVerifier

SCORED = [0]


@dataclass(frozen=True, eq=False)
class HashTeacher(PairVerifier):
    """Log-odds from a hash of the pair: deterministic, independent of batching."""

    kill_after: int = 0
    name: str = "hash-teacher"

    def fingerprint(self) -> str:
        return "hash-teacher-v1"

    def score_texts(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if self.kill_after and SCORED[0] + len(pairs) > self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        SCORED[0] += len(pairs)
        return np.array(
            [
                int(hashlib.sha1(f"{a}\x00{t}".encode()).hexdigest()[:6], 16) / 2**24 * 8 - 4
                for a, t in pairs
            ]
        )


def main(argv: Sequence[str]) -> int:
    index, queries, out, kill_after = argv[0], argv[1], argv[2], int(argv[3])
    batch = int(argv[4]) if len(argv) > 4 else 8
    settings = AdaptSettings(max_pairs=60, top_k=5, random_pages=2, label_batch=batch)
    adapt(
        index,
        out,
        queries=queries,
        verifier=HashTeacher(kill_after=kill_after),
        settings=settings,
        progress=False,
        stop_after="labels",
    )
    print(f"scored {SCORED[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
