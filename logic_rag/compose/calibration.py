"""Turn an atom's cosine similarities into membership probabilities.

Raw similarities are not comparable across atoms: "Flora of Malaysia" may sit at 0.55
for its members while "1970s films" sits at 0.35. Each atom is therefore calibrated
against its own neighbourhood in the corpus: the similarity of its ``threshold_rank``-th
nearest document marks the boundary of its set (p = 0.5 there), and ``temperature``
sets how quickly probability falls off around it:

    p(d ∈ atom) = sigmoid((s(atom, d) − s_(r)) / temperature)

The neighbourhood comes from the same batched search that retrieves the atoms'
candidates, so calibration costs nothing extra.
"""

from __future__ import annotations

import numpy as np

__all__ = ["atom_thresholds", "calibrate"]


def atom_thresholds(neighbour_scores: np.ndarray, threshold_rank: int) -> np.ndarray:
    """Per-atom boundary: the score at ``threshold_rank`` (1-based) of each sorted row."""
    if neighbour_scores.ndim != 2 or neighbour_scores.shape[1] == 0:
        raise ValueError("neighbour_scores must be a non-empty (atoms, depth) matrix")
    rank = min(max(threshold_rank, 1), neighbour_scores.shape[1])
    return neighbour_scores[:, rank - 1].astype(np.float64)


def calibrate(scores: np.ndarray, thresholds: np.ndarray, temperature: float) -> np.ndarray:
    """Probabilities for an ``(atoms, candidates)`` score matrix, row-wise thresholds."""
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    z = (np.asarray(scores, dtype=np.float64) - thresholds[:, None]) / temperature
    return 1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0)))
