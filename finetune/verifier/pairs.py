"""(atom, page, label) pairs from QUEST records: what a constraint verifier learns from.

QUEST's templates say which atoms every gold page satisfies, and which it does not:

=================================  =========================================================
template                           a gold page ...
=================================  =========================================================
``_``                              satisfies the atom
``_ that are also _``, ``both``    satisfies every atom
``_ that are not _``               satisfies A and is a *known non-member* of B
``_ that are also _ but not _``    satisfies A and B, is a known non-member of C
``_ or _``, ``_ or _ or _``        satisfies the atom(s) its attribution names
=================================  =========================================================

Union pages are assigned to an atom only when their annotated attribution (the evidence
sentence and the phrase it supports, ``metadata.attributions``) shares words with exactly
one atom's distinctive words; the other atoms of that union get the page as a *sibling*
negative (pages of one branch of a union rarely belong to the other). *Random* negatives
are pages of the same domain (films, books) never seen as positive for the atom.

Kinds: ``positive`` (label 1), ``excluded`` (0, the hardest: the page is in the query's
other sets), ``sibling`` (0), ``random`` (0). Known non-members are what the verification
AUC is measured on.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["VerifierPair", "quest_pairs", "atom_memberships", "KINDS"]

KINDS = ("positive", "excluded", "sibling", "random")

_MARK = re.compile(r"<mark>(.*?)</mark>", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of in on and or that are also both but not from by with about for to set "
    "films film books book novels novel".split()
)


@dataclass(frozen=True)
class VerifierPair:
    """One training or evaluation example for a constraint verifier."""

    atom: str
    title: str
    label: float
    kind: str


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _union_atoms(atoms: Sequence[str], attributions: Any) -> set[int]:
    """The atoms a union's gold page is attributed to (empty when ambiguous)."""
    if not isinstance(attributions, list):
        return set()
    text = " ".join(
        f"{key} {value}"
        for entry in attributions
        if isinstance(entry, Mapping)
        for key, value in entry.items()
    )
    found = _words(text)
    words = [_words(a) for a in atoms]
    hits = set()
    for i, own in enumerate(words):
        others = set().union(*(w for j, w in enumerate(words) if j != i))
        distinctive = own - others
        if distinctive and distinctive & found:
            hits.add(i)
    return hits if len(hits) == 1 else set()


def atom_memberships(
    records: Iterable[Mapping[str, Any]], titles: set[str]
) -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, set[str]]]:
    """``(members, excluded, siblings)``: atom -> page titles known in / known out of it."""
    members: dict[str, set[str]] = defaultdict(set)
    excluded: dict[str, set[str]] = defaultdict(set)
    siblings: dict[str, set[str]] = defaultdict(set)
    for record in records:
        atoms = [" ".join(a.split()) for a in _MARK.findall(record.get("original_query") or "")]
        meta = record.get("metadata") or {}
        template = meta.get("template")
        attributions = meta.get("attributions") or {}
        gold = [t for t in record.get("docs", []) if t in titles]
        if not atoms or not template:
            continue
        for page in gold:
            if template in ("_", "_ that are also _", "_ that are also both _ and _"):
                inside, outside = atoms, []
            elif template == "_ that are not _":
                inside, outside = atoms[:1], atoms[1:]
            elif template == "_ that are also _ but not _":
                inside, outside = atoms[:2], atoms[2:]
            elif template in ("_ or _", "_ or _ or _"):
                chosen = _union_atoms(atoms, attributions.get(page))
                inside = [atoms[i] for i in chosen]
                for i, atom in enumerate(atoms):
                    if chosen and i not in chosen:
                        siblings[atom].add(page)
                outside = []
            else:
                continue
            for atom in inside:
                members[atom].add(page)
            for atom in outside:
                excluded[atom].add(page)
    for atom in members:
        siblings[atom] -= members[atom]
        excluded[atom] -= members[atom]
    return dict(members), dict(excluded), dict(siblings)


def quest_pairs(
    records: Sequence[Mapping[str, Any]],
    documents: Mapping[str, str],
    *,
    domains: Mapping[str, str] | None = None,
    random_per_positive: float = 1.0,
    seed: int = 0,
) -> list[VerifierPair]:
    """Every known (atom, page) membership and non-membership in ``records``.

    ``documents`` maps title -> text (the corpus); ``domains`` maps title -> domain for
    same-domain random negatives (default: the domain of the records that used the page).
    """
    titles = set(documents)
    members, excluded, siblings = atom_memberships(records, titles)
    if domains is None:
        domains = {
            t: str((r.get("metadata") or {}).get("domain", ""))
            for r in records
            for t in r.get("docs", [])
        }
    by_domain: dict[str, list[str]] = defaultdict(list)
    for title in sorted(titles):
        by_domain[domains.get(title, "")].append(title)
    rng = random.Random(seed)
    seen_positive = set().union(*members.values()) if members else set()
    # Pages gold for any query that names the atom may belong to it (an unassigned union
    # page, say): never use them as random negatives.
    near: dict[str, set[str]] = defaultdict(set)
    for record in records:
        for atom in _MARK.findall(record.get("original_query") or ""):
            near[" ".join(atom.split())].update(record.get("docs", []))
    pairs: list[VerifierPair] = []
    for atom in sorted(set(members) | set(excluded) | set(siblings)):
        inside = members.get(atom, set())
        pairs += [VerifierPair(atom, t, 1.0, "positive") for t in sorted(inside)]
        pairs += [VerifierPair(atom, t, 0.0, "excluded") for t in sorted(excluded.get(atom, ()))]
        pairs += [VerifierPair(atom, t, 0.0, "sibling") for t in sorted(siblings.get(atom, ()))]
        domain = next((domains.get(t, "") for t in sorted(inside)), "")
        pool = by_domain.get(domain) or sorted(titles)
        wanted = round(random_per_positive * max(1, len(inside)))
        chosen: set[str] = set()
        for _ in range(wanted * 10):
            if len(chosen) >= wanted:
                break
            page = rng.choice(pool)
            if page not in inside and page not in seen_positive and page not in near[atom]:
                chosen.add(page)
        pairs += [VerifierPair(atom, t, 0.0, "random") for t in sorted(chosen)]
    return pairs
