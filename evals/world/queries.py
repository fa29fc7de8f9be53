"""Compose QUEST queries from atoms: the 7 templates, size rules, paraphrases, splits.

QUEST (Malaviya et al., 2023) composes Wikipedia categories of one domain with seven
templates and keeps queries whose answer set is small enough to annotate. The rules here:

* atoms of a query are distinct and from one domain;
* the answer set has between 2 and 20 documents inclusive (never empty);
* every atom matters: in a union each atom adds a document the others lack, in an
  intersection each atom removes a document the others keep, and a negated atom removes at
  least one document (``A ∩ B`` is not empty);
* no atom appears in two splits: atoms are partitioned per domain first, then composed.

``original_query`` marks atoms with ``<mark>`` exactly as QUEST does; ``query`` is one of
several hand-written paraphrases of the template.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import vocab

__all__ = [
    "TEMPLATES",
    "N_ATOMS",
    "MIN_ANSWERS",
    "MAX_ANSWERS",
    "evaluate_template",
    "size_rule_violation",
    "original_query",
    "paraphrase",
    "partition_atoms",
    "QueryPool",
    "compose_queries",
]

TEMPLATES: tuple[str, ...] = (
    "_",
    "_ or _",
    "_ or _ or _",
    "_ that are also _",
    "_ that are also both _ and _",
    "_ that are not _",
    "_ that are also _ but not _",
)
N_ATOMS: dict[str, int] = {t: t.count("_") for t in TEMPLATES}
MIN_ANSWERS = 2
MAX_ANSWERS = 20


def evaluate_template(template: str, sets: Sequence[frozenset[int]]) -> frozenset[int]:
    """The answer set of ``template`` applied to the atoms' gold sets (in template order)."""
    if template not in N_ATOMS:
        raise ValueError(f"unknown template {template!r}; expected one of {TEMPLATES}")
    if len(sets) != N_ATOMS[template]:
        raise ValueError(f"template {template!r} takes {N_ATOMS[template]} atoms, got {len(sets)}")
    if template == "_":
        return sets[0]
    if template in ("_ or _", "_ or _ or _"):
        return frozenset().union(*sets)
    if template in ("_ that are also _", "_ that are also both _ and _"):
        return frozenset.intersection(*sets)
    if template == "_ that are not _":
        return sets[0] - sets[1]
    return (sets[0] & sets[1]) - sets[2]


def size_rule_violation(template: str, sets: Sequence[frozenset[int]]) -> str | None:
    """Why a composition breaks the QUEST size rules, or ``None`` when it is acceptable."""
    result = evaluate_template(template, sets)
    if not MIN_ANSWERS <= len(result) <= MAX_ANSWERS:
        return f"answer set has {len(result)} documents, outside {MIN_ANSWERS}..{MAX_ANSWERS}"
    if template in ("_ or _", "_ or _ or _"):
        for i, s in enumerate(sets):
            rest = frozenset().union(*(x for j, x in enumerate(sets) if j != i))
            if s <= rest:
                return f"atom {i} adds nothing to the union"
    elif template in ("_ that are also _", "_ that are also both _ and _"):
        for i in range(len(sets)):
            rest = frozenset.intersection(*(x for j, x in enumerate(sets) if j != i))
            if rest == result:
                return f"atom {i} removes nothing from the intersection"
    elif template == "_ that are not _":
        if not sets[0] & sets[1]:
            return "the negated atom removes nothing"
    elif template == "_ that are also _ but not _":
        both = sets[0] & sets[1]
        if both in (sets[0], sets[1]):
            return "one of the conjoined atoms removes nothing"
        if not both & sets[2]:
            return "the negated atom removes nothing"
    return None


def original_query(template: str, atoms: Sequence[str]) -> str:
    """QUEST's ``original_query``: the template with each ``_`` replaced by a marked atom."""
    parts = template.split("_")
    if len(parts) - 1 != len(atoms):
        raise ValueError(f"template {template!r} takes {len(parts) - 1} atoms, got {len(atoms)}")
    out = parts[0]
    for atom, tail in zip(atoms, parts[1:], strict=True):
        out += f"<mark>{atom}</mark>{tail}"
    return out


def _proper_words() -> frozenset[str]:
    words: set[str] = set()
    for c in vocab.COUNTRIES:
        words.update({c.name.split()[0], c.adjective.split()[0], c.language})
    for group in vocab.REGION_GROUPS:
        words.add(group.split()[0])
    return frozenset(words)


_PROPER = _proper_words()


def _lower(name: str) -> str:
    """Lower-case the head of a category name unless it is a proper noun or Latin family."""
    first = name.split()[0].split("-")[0]
    if first in _PROPER or first.endswith("aceae") or first[:1].isdigit():
        return name
    return name[0].lower() + name[1:]


_PARAPHRASES: dict[str, tuple[str, ...]] = {
    "_": ("{A}", "find me {a}", "what are some {a}", "list of {a}", "which {a} are there"),
    "_ or _": ("{A} or {b}", "either {a} or {b}", "{A}, or {b}", "find me {a} or {b}"),
    "_ or _ or _": (
        "{A}, {b} or {c}",
        "{A} or {b} or {c}",
        "find {a}, {b}, or {c}",
        "what are {a}, {b} or {c}",
    ),
    "_ that are also _": (
        "{A} that are also {b}",
        "{A} that are {b}",
        "{A} which are also {b}",
        "{A} {bc}",
        "what are {a} that are also {b}",
    ),
    "_ that are also both _ and _": (
        "{A} that are also both {b} and {c}",
        "{A} that are {b} and {c}",
        "{A} which are also {b} as well as {c}",
        "{A} {bc} that are also {c}",
    ),
    "_ that are not _": (
        "{A} that are not {b}",
        "{A} but not {b}",
        "{A} excluding {b}",
        "{A} other than {b}",
        "{A} not {bc}",
        "{A} that aren't {b}",
    ),
    "_ that are also _ but not _": (
        "{A} that are also {b} but not {c}",
        "{A} that are {b} but not {c}",
        "{A} which are also {b}, excluding {c}",
        "{A} {bc} but not {c}",
        "{A} {bc}, other than {c}",
    ),
}


def paraphrase(
    template: str, atoms: Sequence[str], clauses: Mapping[str, str | None], rng: random.Random
) -> str:
    """A natural-language ``query`` for the composition; patterns needing a clause are skipped
    when the second atom has none ("{A} not {bc}" -> "Crime novels not set in Maine")."""
    names = {"A": atoms[0], "a": _lower(atoms[0])}
    for key, atom in zip("bc", atoms[1:], strict=False):
        names[key] = _lower(atom)
    clause_b = clauses.get(atoms[1]) if len(atoms) > 1 else None
    options = [p for p in _PARAPHRASES[template] if "{bc}" not in p or clause_b]
    pattern = rng.choice(options)
    return pattern.format(bc=clause_b or "", **names)


def partition_atoms(
    atoms_by_domain: Mapping[str, Sequence[str]],
    weights: Mapping[str, float],
    rng: random.Random,
) -> dict[str, str]:
    """Assign each atom to exactly one split, per domain, in proportion to ``weights``."""
    splits = [s for s in weights if weights[s] > 0]
    if not splits:
        raise ValueError("at least one split needs a positive share of queries")
    total = sum(weights[s] for s in splits)
    out: dict[str, str] = {}
    for domain in sorted(atoms_by_domain):
        names = sorted(atoms_by_domain[domain])
        rng.shuffle(names)
        start = 0
        for i, split in enumerate(splits):
            end = (
                len(names)
                if i == len(splits) - 1
                else start + round(len(names) * weights[split] / total)
            )
            for name in names[start:end]:
                out[name] = split
            start = end
    return out


@dataclass
class QueryPool:
    """The atoms one split may use in one domain, indexed for fast sampling."""

    members: dict[str, frozenset[int]]

    def __post_init__(self) -> None:
        self.names = sorted(self.members)
        self.small = [n for n in self.names if len(self.members[n]) <= MAX_ANSWERS]
        by_entity: dict[int, list[str]] = {}
        for name in self.names:
            for e in self.members[name]:
                by_entity.setdefault(e, []).append(name)
        self.by_entity = by_entity
        self.entities = sorted(e for e, names in by_entity.items() if len(names) >= 2)
        self._triples: list[tuple[str, str, str]] | None = None

    def triples(self) -> list[tuple[str, str, str]]:
        """Every valid ``_ that are also both _ and _`` atom set, enumerated once.

        Three-way intersections with >= 2 answers are too rare to find by random draws in
        small worlds, so they are enumerated from each entity's atoms (a few per entity).
        """
        if self._triples is None:
            found: set[tuple[str, str, str]] = set()
            for names in self.by_entity.values():
                for i, a in enumerate(names):
                    for j in range(i + 1, len(names)):
                        ab = self.members[a] & self.members[names[j]]
                        if len(ab) < MIN_ANSWERS:
                            continue
                        for c in names[j + 1 :]:
                            t = (a, names[j], c)
                            if t in found:
                                continue
                            sets = [self.members[x] for x in t]
                            if size_rule_violation("_ that are also both _ and _", sets) is None:
                                found.add(t)
            self._triples = sorted(found)
        return self._triples

    def sample(self, template: str, rng: random.Random) -> tuple[str, ...] | None:
        """One random composition that obeys the size rules, or ``None`` after a miss."""
        n = N_ATOMS[template]
        if template == "_":
            singles = [x for x in self.small if len(self.members[x]) >= MIN_ANSWERS]
            atoms: tuple[str, ...] = (rng.choice(singles),) if singles else ()
        elif template == "_ that are also both _ and _":
            triples = self.triples()
            if not triples:
                return None
            atoms = tuple(rng.sample(rng.choice(triples), 3))
        elif template.startswith("_ or"):
            if len(self.small) < n:
                return None
            atoms = tuple(rng.sample(self.small, n))
        else:
            if not self.entities:
                return None
            anchor = rng.choice(self.entities)
            around = self.by_entity[anchor]
            first = rng.choice(around)
            if template == "_ that are not _":
                inside = rng.choice(sorted(self.members[first]))
                candidates = [x for x in self.by_entity[inside] if x != first]
                if not candidates:
                    return None
                atoms = (first, rng.choice(candidates))
            else:
                # A second member of the first atom makes an answer set of >= 2 likely:
                # the conjuncts are drawn from the atoms both entities share.
                other = rng.choice(sorted(self.members[first]))
                shared = sorted(set(around) & set(self.by_entity[other]) - {first})
                n_conjuncts = 2 if template == "_ that are also _ but not _" else n
                if other == anchor or len(shared) < n_conjuncts - 1:
                    return None
                conjuncts = [first, *rng.sample(shared, n_conjuncts - 1)]
                rng.shuffle(conjuncts)
                if template == "_ that are also _ but not _":
                    both = self.members[conjuncts[0]] & self.members[conjuncts[1]]
                    inside = rng.choice(sorted(both))
                    negated = [x for x in self.by_entity[inside] if x not in conjuncts]
                    if not negated:
                        return None
                    conjuncts.append(rng.choice(negated))
                atoms = tuple(conjuncts)
        if len(atoms) != n or len(set(atoms)) != n:
            return None
        if size_rule_violation(template, [self.members[a] for a in atoms]) is not None:
            return None
        return atoms


def compose_queries(
    pools: Mapping[str, QueryPool],
    n_queries: int,
    rng: random.Random,
    max_tries_per_query: int = 400,
) -> list[tuple[str, str, tuple[str, ...]]]:
    """``n_queries`` distinct (template, domain, atoms) spread evenly over templates and
    domains; a cell that cannot be filled passes its share to the cells that can."""
    cells = [(t, d) for t in TEMPLATES for d in sorted(pools)]
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out: list[tuple[str, str, tuple[str, ...]]] = []
    exhausted: set[tuple[str, str]] = set()

    def key(template: str, atoms: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        """Compositions with the same meaning (A and B = B and A) count once."""
        if template == "_ that are not _":
            return template, atoms
        if template == "_ that are also _ but not _":
            return template, (*sorted(atoms[:2]), atoms[2])
        return template, tuple(sorted(atoms))

    i = 0
    while len(out) < n_queries and len(exhausted) < len(cells):
        cell = cells[i % len(cells)]
        i += 1
        if cell in exhausted:
            continue
        template, domain = cell
        for _ in range(max_tries_per_query):
            atoms = pools[domain].sample(template, rng)
            if atoms is not None and key(template, atoms) not in seen:
                seen.add(key(template, atoms))
                out.append((template, domain, atoms))
                break
        else:
            exhausted.add(cell)
    return out
