"""A teacher that answers from known atom sets: the gold-label control for ``adapt``.

Why: issue 41's acceptance table puts, beside the LLM-taught model, "the same atoms and
pairs with gold labels", so that the table shows what the teacher's errors cost. ``adapt``
takes any verifier as its teacher, so the control is a verifier that says yes exactly when
the page is a known member of the atom (an ``atoms.jsonl`` as ``logic-rag world``, the
WordNet builder and :func:`logic_rag.finetune.data.quest_atom_sets` write it: ``atom``,
``docs`` = page titles). Atoms match case- and space-insensitively; an atom the file does
not know raises instead of silently answering no. Run it into a fresh folder with the LLM
run's questions and settings and the plan is the same, pair for pair (a copy of the LLM
run's folder is refused: the teacher is part of the run's fingerprint). The rules' atom
texts rarely match QUEST's marked atoms ("1946 Indian musical films" is QUEST's "Indian
musical films" and "1946 films"), so the sets must first be keyed by the rules' atoms:
``experiments/adapt_acceptance.py`` (``align_atoms``) does that per question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from logic_rag.verifiers.base import PairVerifier

from .atoms import atom_key
from .state import AdaptError

__all__ = ["KnownSetsVerifier", "read_atom_sets"]


def read_atom_sets(path: str | Path) -> dict[str, frozenset[str]]:
    """``atom -> member titles`` from an ``atoms.jsonl`` file (``atom``, ``docs``), read by
    the QUEST reader (``file:line`` errors), keyed by normalised atom text."""
    from logic_rag.evals.quest.data import load_atom_sets

    return {atom_key(atom): frozenset(docs) for atom, docs in load_atom_sets(path).items()}


@dataclass(frozen=True, eq=False)
class KnownSetsVerifier(PairVerifier):
    """Log-odds +20 for a known member (the page's first line is its title), -20 otherwise.

    ``sets`` maps normalised atom text to member titles (:func:`read_atom_sets`);
    ``source`` names them in the fingerprint (e.g. the file's SHA-256).
    """

    sets: Mapping[str, frozenset[str]] = field(default_factory=dict)
    source: str = "known-sets"
    name: str = "known-sets"

    def fingerprint(self) -> str:
        return f"known-sets:{self.source}"

    def score_texts(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        out = np.empty(len(pairs))
        for i, (atom, text) in enumerate(pairs):
            members = self.sets.get(atom_key(atom))
            if members is None:
                raise AdaptError(
                    f"the atom {atom!r} is not in the known sets ({self.source}); the gold "
                    f"control needs a set for every atom of the run"
                )
            title = text.split("\n", 1)[0]
            out[i] = 20.0 if title in members else -20.0
        return out

    @classmethod
    def from_file(cls, path: str | Path, **options: Any) -> KnownSetsVerifier:
        """The verifier of an ``atoms.jsonl`` file, fingerprinted by its SHA-256."""
        import hashlib

        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        return cls(sets=read_atom_sets(path), source=digest, **options)
