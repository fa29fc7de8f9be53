"""Phase 3: training queries with result sets, by set algebra over the teacher's verdicts.

Each atom's result set is the pages the teacher said yes to. Composed queries come from
2-3 atoms that co-occur (share a yes page): ``A ∧ B``, ``A ∨ B``, ``A ∖ B``, ``B ∖ A`` and,
with a third atom that co-occurs with one of them, ``A ∧ B ∧ C``, ``A ∧ B ∖ C``,
``A ∨ B ∨ C``. A composed set is evaluated only over the pages the teacher judged for
*every* atom of the combination (:func:`judged_universe`), so each set is exactly what the
verdicts imply and never a guess about an unjudged page.

Texts: the QUEST templates ("X that are also Y", "X or Y", "X that are not Y", ...) and,
for exclusions, the natural phrasings the rules decomposer reads ("X but not Y",
"X excluding Y", "X other than Y", "X except Y"), picked with a seeded draw. A text is kept
only if the rules decomposer reads it back as the intended logic (:func:`reads_back`);
otherwise the QUEST template is tried, and a query neither reads back is dropped (and
counted), so the retriever is never trained on a text it would decompose differently.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or, canonical, evaluate

from .atoms import atom_key

__all__ = [
    "AtomVerdicts",
    "ComposedQuery",
    "verdicts_from_labels",
    "judged_universe",
    "compose_queries",
    "question_queries",
    "reads_back",
    "render_text",
    "PAIR_SHAPES",
    "TRIPLE_SHAPES",
    "EXCLUSION_PHRASES",
]

PAIR_SHAPES: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("A&B", "_ that are also _", (0, 1)),
    ("A|B", "_ or _", (0, 1)),
    ("A-B", "_ that are not _", (0, 1)),
    ("B-A", "_ that are not _", (1, 0)),
)
TRIPLE_SHAPES: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("A&B&C", "_ that are also both _ and _", (0, 1, 2)),
    ("A&B-C", "_ that are also _ but not _", (0, 1, 2)),
    ("A|B|C", "_ or _ or _", (0, 1, 2)),
)
EXCLUSION_PHRASES = ("{a} but not {b}", "{a} excluding {b}", "{a} other than {b}", "{a} except {b}")
"""Natural phrasings of ``A ∖ B`` that the rules decomposer reads (besides QUEST's)."""


@dataclass(frozen=True)
class AtomVerdicts:
    """Per atom: the pages the teacher judged and those it said yes to (doc ids)."""

    judged: dict[str, frozenset[str]]
    yes: dict[str, frozenset[str]]


@dataclass(frozen=True)
class ComposedQuery:
    """A training query: its text, logic, shape, the atoms it combines and its result set.

    ``universe`` holds the pages judged for every atom of the query: the set is exact over
    them, so the judged pages outside ``gold`` are known non-members (hard negatives), and
    a page outside ``universe`` is unknown, never a known negative.
    """

    text: str
    logic: LogicalQuery
    shape: str
    template: str
    atoms: tuple[str, ...]
    gold: frozenset[str]
    phrasing: str
    universe: frozenset[str] = frozenset()


def verdicts_from_labels(rows: Iterable[Mapping[str, Any]], threshold: float) -> AtomVerdicts:
    """Verdicts from ``labels.jsonl`` rows (``atom``, ``doc``, ``score``)."""
    judged: dict[str, set[str]] = {}
    yes: dict[str, set[str]] = {}
    for row in rows:
        atom, doc = row["atom"], row["doc"]
        judged.setdefault(atom, set()).add(doc)
        if float(row["score"]) >= threshold:
            yes.setdefault(atom, set()).add(doc)
    return AtomVerdicts(
        {a: frozenset(s) for a, s in judged.items()},
        {a: frozenset(yes.get(a, ())) for a in judged},
    )


def judged_universe(verdicts: AtomVerdicts, combo: Iterable[str]) -> frozenset[str]:
    """The pages judged for every atom of ``combo``."""
    sets = [verdicts.judged[a] for a in combo]
    return frozenset.intersection(*sets) if sets else frozenset()


def _normalised(q: LogicalQuery) -> LogicalQuery:
    if isinstance(q, Atom):
        return Atom(atom_key(q.text))
    if isinstance(q, Not):
        return Not(_normalised(q.arg))
    if isinstance(q, And):
        return And(tuple(_normalised(a) for a in q.args))
    if isinstance(q, Or):
        return Or(tuple(_normalised(a) for a in q.args))
    raise TypeError(f"not a logical query: {q!r}")


def reads_back(text: str, logic: LogicalQuery, decomposer: Any) -> bool:
    """Does ``decomposer`` read ``text`` as ``logic`` (case and spacing of atoms aside)?"""
    try:
        parsed = decomposer.decompose(text).query
    except ValueError:
        return False
    return canonical(_normalised(parsed)) == canonical(_normalised(logic))


def render_text(template: str, names: list[str], phrasing: str) -> str:
    """``names`` in a QUEST template, or for a difference in an exclusion phrasing."""
    if phrasing != "quest" and template == "_ that are not _":
        return phrasing.format(a=names[0], b=names[1])
    parts = template.split("_")
    out = parts[0]
    for name, tail in zip(names, parts[1:], strict=True):
        out += name + tail
    return out


def _logic(template: str, names: list[str]) -> LogicalQuery:
    from logic_rag.query.templates import from_template

    return from_template(template, names)


def _co_occurring_pairs(verdicts: AtomVerdicts) -> list[tuple[str, str]]:
    by_doc: dict[str, list[str]] = {}
    for atom in sorted(verdicts.yes):
        for doc in verdicts.yes[atom]:
            by_doc.setdefault(doc, []).append(atom)
    pairs: set[tuple[str, str]] = set()
    for atoms in by_doc.values():
        pairs.update(itertools.combinations(sorted(atoms), 2))
    return sorted(pairs)


def compose_queries(
    verdicts: AtomVerdicts,
    *,
    max_queries: int,
    min_size: int = 1,
    max_size: int = 200,
    seed: int = 0,
    decomposer: Any = None,
) -> tuple[list[ComposedQuery], dict[str, Any]]:
    """Single-atom and composed queries with their result sets, and counts for the card.

    Single atoms come first (each atom with ``min_size``..``max_size`` yes pages); composed
    queries are then drawn in a seeded order until ``max_queries`` in all. Returns the
    queries and ``{"by_shape": ..., "dropped_unreadable": ..., "dropped_size": ...}``.
    """
    from logic_rag.query.rules import RuleDecomposer

    decomposer = decomposer or RuleDecomposer()
    rng = random.Random(seed)
    out: list[ComposedQuery] = []
    seen: set[LogicalQuery] = set()
    stats: dict[str, Any] = {"by_shape": {}, "dropped_unreadable": 0, "dropped_size": 0}

    def in_range(gold: frozenset[str]) -> bool:
        return min_size <= len(gold) <= max_size

    def add(shape: str, template: str, names: list[str], universe: frozenset[str]) -> None:
        logic = _logic(template, names)
        key = canonical(_normalised(logic))
        if key in seen:
            return
        sets = {a: verdicts.yes[a] & universe for a in names}
        gold = frozenset(evaluate(logic, sets, universe))
        if not in_range(gold):
            stats["dropped_size"] += 1
            return
        choices = ["quest"]
        if template == "_ that are not _":
            choices = [rng.choice(("quest", *EXCLUSION_PHRASES)), "quest"]
        for phrasing in dict.fromkeys(choices):
            text = render_text(template, names, phrasing)
            if reads_back(text, logic, decomposer):
                seen.add(key)
                out.append(
                    ComposedQuery(
                        text, logic, shape, template, tuple(names), gold, phrasing, universe
                    )
                )
                stats["by_shape"][shape] = stats["by_shape"].get(shape, 0) + 1
                return
        stats["dropped_unreadable"] += 1

    for atom in sorted(verdicts.judged):
        if len(out) >= max_queries:
            break
        add("A", "_", [atom], verdicts.judged[atom])
    pairs = _co_occurring_pairs(verdicts)
    rng.shuffle(pairs)
    partners: dict[str, set[str]] = {}
    for a, b in pairs:
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    for a, b in pairs:
        if len(out) >= max_queries:
            break
        if rng.random() < 0.5:
            a, b = b, a  # which atom leads the text is a coin toss
        universe = judged_universe(verdicts, (a, b))
        for shape, template, slots in PAIR_SHAPES:
            if len(out) >= max_queries:
                break
            add(shape, template, [(a, b)[s] for s in slots], universe)
        thirds = sorted((partners[a] | partners[b]) - {a, b})
        if not thirds:
            continue
        c = rng.choice(thirds)
        universe = judged_universe(verdicts, (a, b, c))
        for shape, template, slots in TRIPLE_SHAPES:
            if len(out) >= max_queries:
                break
            add(shape, template, [(a, b, c)[s] for s in slots], universe)
    stats["queries"] = len(out)
    stats["co_occurring_pairs"] = len(pairs)
    return out, stats


def question_queries(
    questions: Iterable[str],
    verdicts: AtomVerdicts,
    *,
    min_size: int = 1,
    max_size: int = 200,
    decomposer: Any = None,
) -> tuple[list[ComposedQuery], dict[str, Any]]:
    """The user's own questions as training queries, each with the result set its logic
    gives over the teacher's verdicts on its atoms.

    A question is read by ``decomposer`` (rules by default) exactly as the retriever reads
    it, so its atoms are the atoms that were labelled; its set is evaluated over the pages
    judged for all of them. Questions with an unlabelled atom (their group did not fit the
    cost bound) or a set outside ``min_size``..``max_size`` are dropped and counted.
    """
    from logic_rag.query.algebra import atoms as atoms_of
    from logic_rag.query.rules import RuleDecomposer
    from logic_rag.query.templates import to_template

    decomposer = decomposer or RuleDecomposer()
    spelling = {atom_key(a): a for a in verdicts.judged}
    out: list[ComposedQuery] = []
    stats: dict[str, Any] = {"questions": 0, "unlabelled": 0, "dropped_size": 0}
    for text in dict.fromkeys(questions):
        logic = decomposer.decompose(text).query
        names = {a.text: spelling.get(atom_key(a.text)) for a in atoms_of(logic)}
        if None in names.values():
            stats["unlabelled"] += 1
            continue
        universe = judged_universe(verdicts, dict.fromkeys(names.values()))
        sets = {atom: verdicts.yes[name] & universe for atom, name in names.items()}
        gold = frozenset(evaluate(logic, sets, universe))
        if not min_size <= len(gold) <= max_size:
            stats["dropped_size"] += 1
            continue
        atoms = tuple(dict.fromkeys(names.values()))  # type: ignore[arg-type]
        template = to_template(logic) or ""
        out.append(ComposedQuery(text, logic, "Q", template, atoms, gold, "question", universe))
        stats["questions"] += 1
    return out, stats
