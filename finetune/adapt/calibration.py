"""Phase 6: a monotone map from the embedding evidence to P(the teacher says yes).

Why: the embedding verifier's p (a sigmoid of each atom's cosine evidence against its own
neighbourhood) ranks pages well but is not a probability: p = 0.7 does not mean that seven
pages in ten satisfy the atom. The teacher's verdicts are labels for exactly that
question, so an isotonic regression (pool adjacent violators, :func:`isotonic_fit`) of
"teacher said yes" on the embedding p gives a calibrated, monotone map; the honest ✓ / ✗ /
? verdicts of the quality mode need one. The map belongs to one corpus, one encoder and
one teacher, and ``calibration.json`` records their fingerprints so that a reader can
refuse a map fitted for another index.

The map's values stay within ``0.5 / pairs`` of 0 and 1 (a run of yes verdicts is
evidence, not certainty). The quality of the map is measured on held-out atoms (a seeded fifth): Brier score and
expected calibration error of the raw p against the calibrated p; the final map is then
fitted on every pair.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Calibration",
    "isotonic_fit",
    "brier",
    "expected_calibration_error",
    "embedding_evidence",
    "fit_calibration",
    "load_calibration",
    "CALIBRATION_FILE",
]

CALIBRATION_FILE = "calibration.json"


def isotonic_fit(
    x: Sequence[float], y: Sequence[float], weights: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Non-decreasing least-squares fit of ``y`` on ``x`` by pool adjacent violators.

    Returns ``(knots_x, knots_y)`` for :func:`numpy.interp`: the first and last input of
    every pooled block with the block's fitted value, so that each observed input maps to
    exactly its fitted value (as scikit-learn's ``IsotonicRegression.predict`` does) and
    values between blocks are interpolated. Ties in ``x`` are pooled first.
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    ws = np.ones_like(xs) if weights is None else np.asarray(weights, dtype=np.float64)
    if xs.shape != ys.shape or xs.shape != ws.shape or xs.ndim != 1 or not len(xs):
        raise ValueError("x, y and weights must be 1-d arrays of the same non-zero length")
    order = np.argsort(xs, kind="stable")
    xs, ys, ws = xs[order], ys[order], ws[order]
    uniq, start = np.unique(xs, return_index=True)  # ties pooled first
    sums_w = np.add.reduceat(ws, start)
    sums_y = np.add.reduceat(ws * ys, start)
    blocks: list[list[float]] = []  # [weight, weighted y sum, first x, last x]
    for w, sy, ux in zip(sums_w.tolist(), sums_y.tolist(), uniq.tolist(), strict=True):
        blocks.append([w, sy, ux, ux])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][0] >= blocks[-1][1] / blocks[-1][0]:
            w2, sy2, _, last = blocks.pop()
            blocks[-1][0] += w2
            blocks[-1][1] += sy2
            blocks[-1][3] = last
    knots_x: list[float] = []
    knots_y: list[float] = []
    for w, sy, first, last in blocks:
        for value in (first, last) if last > first else (first,):
            knots_x.append(value)
            knots_y.append(sy / w)
    return np.array(knots_x), np.array(knots_y)


def brier(p: np.ndarray, y: np.ndarray) -> float:
    """Mean squared error of probabilities ``p`` against 0/1 outcomes ``y``."""
    return float(np.mean((np.asarray(p) - np.asarray(y)) ** 2))


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Share-weighted mean |mean p - share of yes| over ``bins`` equal-width bins of p."""
    p, y = np.asarray(p, dtype=np.float64), np.asarray(y, dtype=np.float64)
    which = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        mask = which == b
        if mask.any():
            total += mask.mean() * abs(p[mask].mean() - y[mask].mean())
    return float(total)


@dataclass(frozen=True)
class Calibration:
    """A fitted map from the embedding verifier's p to P(teacher says yes)."""

    knots_x: np.ndarray
    knots_y: np.ndarray
    fingerprint: dict[str, Any]
    verifier: dict[str, Any]

    def __call__(self, p: np.ndarray) -> np.ndarray:
        """Calibrated probabilities (piecewise linear between knots, flat outside)."""
        return np.interp(np.asarray(p, dtype=np.float64), self.knots_x, self.knots_y)


def load_calibration(path: str | Path) -> Calibration:
    """Read ``calibration.json`` written by :func:`fit_calibration`."""
    from .state import AdaptError

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Calibration(
            np.asarray(data["map"]["x"], dtype=np.float64),
            np.asarray(data["map"]["y"], dtype=np.float64),
            dict(data["fingerprint"]),
            dict(data["input"]["verifier"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AdaptError(f"{path} is not a calibration file ({exc})") from None


def embedding_evidence(
    retriever: Any, pairs: Sequence[tuple[str, int]], verifier: Any | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The embedding verifier's ``(p, raw evidence)`` for ``(atom, row)`` pairs."""
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.verifiers.base import CheckRequest
    from logic_rag.verifiers.embedding import EmbeddingVerifier

    verifier = verifier or EmbeddingVerifier()
    by_atom: dict[str, list[int]] = {}
    for i, (atom, _) in enumerate(pairs):
        by_atom.setdefault(atom, []).append(i)
    names = sorted(by_atom)
    ctx = SearchContext(retriever.resources)
    verifier.prepare(names, ctx)
    ctx.run_wanted()
    requests = [
        CheckRequest((a,), np.array([pairs[i][1] for i in by_atom[a]], np.int64)) for a in names
    ]
    probs = np.empty(len(pairs))
    raw = np.empty(len(pairs))
    for atom, checked in zip(names, verifier.check(requests, ctx), strict=True):
        idx = by_atom[atom]
        probs[idx] = checked.probs[0]
        raw[idx] = checked.evidence[0] if checked.evidence is not None else checked.probs[0]
    return probs, raw


def fit_calibration(
    retriever: Any,
    labels: Sequence[dict[str, Any]],
    *,
    threshold: float,
    fingerprint: dict[str, Any],
    seed: int = 0,
) -> dict[str, Any]:
    """Fit the map on labelled pairs; returns the ``calibration.json`` object.

    ``labels`` rows have ``atom``, ``doc`` (a document id of ``retriever``) and ``score``.
    """
    from dataclasses import asdict

    from logic_rag.verifiers.embedding import EmbeddingVerifier

    from .state import AdaptError

    rows_by_id = {d.id: r for r, d in enumerate(retriever.documents)}
    pairs = [(row["atom"], rows_by_id[row["doc"]]) for row in labels if row["doc"] in rows_by_id]
    if len(pairs) < 2:
        raise AdaptError("fewer than two labelled pairs: nothing to calibrate")
    y = np.array(
        [float(row["score"]) >= threshold for row in labels if row["doc"] in rows_by_id], float
    )
    verifier = EmbeddingVerifier()
    p, _ = embedding_evidence(retriever, pairs, verifier)
    atoms = sorted({a for a, _ in pairs})
    random.Random(seed).shuffle(atoms)
    held = set(atoms[: max(1, len(atoms) // 5)]) if len(atoms) >= 2 else set()
    held_mask = np.array([a in held for a, _ in pairs])
    check: dict[str, Any] = {"held_out_atoms": len(held), "held_out_pairs": int(held_mask.sum())}
    if held and (~held_mask).any() and held_mask.any():
        kx, ky = isotonic_fit(p[~held_mask], y[~held_mask])
        fitted = np.interp(p[held_mask], kx, ky)
        check.update(
            {
                "brier_raw": round(brier(p[held_mask], y[held_mask]), 4),
                "brier_calibrated": round(brier(fitted, y[held_mask]), 4),
                "ece_raw": round(expected_calibration_error(p[held_mask], y[held_mask]), 4),
                "ece_calibrated": round(expected_calibration_error(fitted, y[held_mask]), 4),
                "yes_rate": round(float(y[held_mask].mean()), 4),
            }
        )
    kx, ky = isotonic_fit(p, y)
    # A block of only yes (or only no) verdicts is evidence, not certainty: the map stays
    # half a pair's weight away from 0 and 1, so no calibrated p ever claims a sure verdict.
    margin = 0.5 / len(pairs)
    ky = np.clip(ky, margin, 1.0 - margin)
    return {
        "what": "monotone map (isotonic, pool adjacent violators) from the embedding "
        "verifier's p to P(teacher says yes); apply with numpy.interp(p, map.x, map.y)",
        "input": {"kind": "embedding_p", "verifier": asdict(verifier)},
        "map": {"x": [round(float(v), 6) for v in kx], "y": [round(float(v), 6) for v in ky]},
        "pairs": len(pairs),
        "yes_rate": round(float(y.mean()), 4),
        "held_out": check,
        "fingerprint": fingerprint,
    }
