"""Three-valued constraint verdicts: ✓ holds, ✗ does not, ? unsure.

A hit's explanation is the product's promise, so a verdict must mean what it says. Each
(constraint, page) pair has a probability from the verifier that answered it last (an
LLM's P(yes), or the embedding evidence calibrated against the corpus); for a negated
atom the constraint's degree is one minus it. The verdict is ✓ at or above ``high``, ✗ at
or below ``low``, and ? between: a probability near one half is reported as unsure
instead of flipping on noise. Embedding evidence calibrated only against a handful of
given candidates (a reranker's default) says where a page stands among them, not whether
it holds, so its band is wider (``candidates_low`` / ``candidates_high``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VerdictRule", "MARKS", "mark"]

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
