"""Three-valued constraint verdicts: ✓ holds, ✗ does not, ? unsure.

A hit's explanation is the product's promise, so a verdict must mean what it says. Each
(constraint, page) pair has a probability from the verifier that answered it last (an
LLM's P(yes), or the embedding evidence calibrated against the corpus); for a negated
atom the constraint's degree is one minus it. The verdict is ✓ at or above ``high``, ✗ at
or below ``low``, and ? between: a probability near one half is reported as unsure
instead of flipping on noise. Embedding evidence calibrated only against a handful of
given candidates (a reranker's default) says where a page stands among them, not whether
it holds, so its band is wider (``candidates_low`` / ``candidates_high``). With an
:class:`EvidenceCalibration` (``LogicSettings(verdict_calibration=FILE)``, the ``logic``
group of a strategy's settings, from ``logic-rag adapt`` or ``fit-cascade``), the embedding probability is first mapped to P(holds) as
labelled pairs of the corpus measured it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["VerdictRule", "EvidenceCalibration", "MARKS", "mark"]

#: How each verdict is printed.
MARKS = {True: "✓", False: "✗", None: "?"}


def mark(verdict: bool | None) -> str:
    """``✓``, ``✗`` or ``?`` for a verdict."""
    return MARKS[None if verdict is None else bool(verdict)]


@dataclass(frozen=True)
class VerdictRule:
    """Where the degrees of a constraint turn into ✓ / ✗ / ?."""

    low: float = 0.3
    high: float = 0.7
    candidates_low: float = 0.1
    candidates_high: float = 0.9

    def __post_init__(self) -> None:
        for lo, hi in ((self.low, self.high), (self.candidates_low, self.candidates_high)):
            if not 0.0 <= lo <= hi <= 1.0:
                raise ValueError("verdict bands need 0 <= low <= high <= 1")

    def verdict(self, degree: float, *, relative: bool = False) -> bool | None:
        """The verdict for a constraint held to ``degree`` (``relative``: embedding
        evidence calibrated on the candidates only)."""
        low, high = (
            (self.candidates_low, self.candidates_high) if relative else (self.low, self.high)
        )
        if degree >= high:
            return True
        if degree <= low:
            return False
        return None


@dataclass(frozen=True)
class EvidenceCalibration:
    """A monotone map from the embedding verifier's probability (its corpus rule) to
    P(the constraint holds), fitted on labelled pairs of one corpus: what makes an
    embedding ✓ / ✗ mean what it says.

    Two files carry one: ``calibration.json`` of ``logic-rag adapt`` (an isotonic map,
    ``{"map": {"x": [...], "y": [...]}}``, with the encoder it was fitted for) and a
    labelled sample of ``logic-rag fit-cascade`` (its isotonic fit of the LLM's verdicts
    on the positive atoms' pairs).
    """

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    source: str
    encoder_sha256: str | None = None
    #: A fit-cascade sample's key (corpus, encoder, ...); None for ``calibration.json``.
    key: dict[str, str] | None = None

    def __call__(self, p: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(p, dtype=np.float64), self.xs, self.ys)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvidenceCalibration:
        """Read either file; one-line ``ValueError`` naming the file when it is neither."""
        from logic_rag.inputs import read_small_file
        from logic_rag.json_limits import loads_bounded

        p = Path(path)
        try:
            data = loads_bounded(read_small_file(p), parse_constant=_refuse_constant)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            if data.get("format") == "logic-rag cascade thresholds":
                from logic_rag.verifiers.thresholds import CascadeThresholds

                thresholds = CascadeThresholds.load(p)
                xs = np.linspace(0.0, 1.0, 101)
                ys = thresholds.expected(xs, positive=True)
                return cls(tuple(xs.tolist()), tuple(ys.tolist()), str(p), key=thresholds.key)
            xs_raw, ys_raw = data["map"]["x"], data["map"]["y"]
            xs = np.asarray(xs_raw, dtype=np.float64)
            ys = np.asarray(ys_raw, dtype=np.float64)
            if xs.ndim != 1 or xs.shape != ys.shape or not len(xs):
                raise ValueError("map.x and map.y must be lists of one length")
            if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
                raise ValueError("the map holds a non-finite number")
            if (np.diff(xs) < 0).any() or (np.diff(ys) < 0).any():
                raise ValueError("the map must be non-decreasing")
            if min(xs.min(), ys.min()) < 0 or max(xs.max(), ys.max()) > 1:
                raise ValueError("the map's x and y must lie in [0, 1] (they are probabilities)")
            fingerprint = data.get("fingerprint")
            encoder = fingerprint.get("encoder") if isinstance(fingerprint, dict) else None
            sha = encoder.get("weights_sha256") if isinstance(encoder, dict) else None
            if not isinstance(sha, str) or not sha:
                raise ValueError(
                    "it does not say which encoder it was fitted for (no "
                    "fingerprint.encoder.weights_sha256); run `logic-rag adapt` for this index"
                )
            return cls(tuple(xs.tolist()), tuple(ys.tolist()), str(p), sha)
        except (OSError, ValueError, KeyError, TypeError, RecursionError, OverflowError) as exc:
            what = f"no field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ValueError(f"cannot read a verdict calibration from {p}: {what}") from None

    def check_for(self, *, encoder_sha256: str, encoder_name: str, corpus: str) -> None:
        """Refuse a map fitted for another set-up: a ``calibration.json`` for another
        encoder's weights, a fit-cascade sample for another corpus or encoder (its key,
        checked as the ``quality`` thresholds are; every field required)."""
        if self.key is None:
            self.check_encoder(encoder_sha256)
            return
        want = {"encoder": encoder_name, "corpus": corpus}
        missing = sorted(k for k in want if not self.key.get(k))
        if missing:
            raise ValueError(
                f"the verdict calibration {self.source} does not say which "
                f"{', '.join(missing)} it was fitted for; fit it again with `logic-rag "
                f"fit-cascade` for this index"
            )
        differ = sorted(k for k in want if self.key[k] != want[k])
        if differ:
            raise ValueError(
                f"the verdict calibration {self.source} was fitted for another "
                f"{', '.join(differ)} ({'; '.join(f'{k}: {self.key[k][:40]}' for k in differ)}"
                f"); fit it again for this index with `logic-rag fit-cascade`, or run "
                f"`logic-rag adapt`"
            )

    def check_encoder(self, sha256: str) -> None:
        """Refuse a map fitted on another encoder's evidence."""
        if self.encoder_sha256 != sha256:
            raise ValueError(
                f"the verdict calibration {self.source} was fitted for another encoder "
                f"(weights {(self.encoder_sha256 or 'unknown')[:12]}, this index's {sha256[:12]}); run "
                f"`logic-rag adapt` for this index"
            )


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")
