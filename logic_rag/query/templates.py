"""The seven QUEST query templates (Malaviya et al., 2023) and their logical form.

QUEST composes one to three atoms (Wikipedia category names) with a fixed template; the
template string is stored in each record's ``metadata.template``. This module maps a
template plus its atoms to a :data:`LogicalQuery` and back, so that evaluation can report
per-template numbers for any query shape that happens to match a template.
"""

from __future__ import annotations

from collections.abc import Sequence

from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or, canonical

__all__ = ["TEMPLATES", "from_template", "to_template", "template_arity"]

#: The QUEST templates, in the order the paper lists them; ``_`` is an atom slot.
TEMPLATES: tuple[str, ...] = (
    "_",
    "_ or _",
    "_ or _ or _",
    "_ that are also _",
    "_ that are also both _ and _",
    "_ that are not _",
    "_ that are also _ but not _",
)


def template_arity(template: str) -> int:
    """Number of atom slots in ``template``; ``ValueError`` if it is not a QUEST template."""
    if template not in TEMPLATES:
        raise ValueError(f"unknown QUEST template {template!r}; expected one of {list(TEMPLATES)}")
    return template.split().count("_")


def from_template(template: str, atom_texts: Sequence[str]) -> LogicalQuery:
    """Build the query of ``template`` with ``atom_texts`` in slot order.

    The result keeps slot order (it is not canonicalised), so ``atoms()`` returns the atoms
    in the order they were marked in the QUEST record.
    """
    if isinstance(atom_texts, str):
        raise TypeError("atom_texts must be a sequence of strings, not one string")
    n = template_arity(template)
    if len(atom_texts) != n:
        raise ValueError(
            f"template {template!r} has {n} slot(s) but {len(atom_texts)} atom(s) were given:"
            f" {list(atom_texts)!r}"
        )
    a = [Atom(t) for t in atom_texts]
    if template == "_":
        return a[0]
    if template in ("_ or _", "_ or _ or _"):
        return Or(tuple(a))
    if template in ("_ that are also _", "_ that are also both _ and _"):
        return And(tuple(a))
    if template == "_ that are not _":
        return And((a[0], Not(a[1])))
    # "_ that are also _ but not _"
    return And((a[0], a[1], Not(a[2])))


def to_template(q: LogicalQuery) -> str | None:
    """The QUEST template whose shape ``canonical(q)`` has, or ``None`` if none fits."""
    c = canonical(q)
    if isinstance(c, Atom):
        return "_"
    if isinstance(c, Or):
        if all(isinstance(a, Atom) for a in c.args) and len(c.args) in (2, 3):
            return "_ or _" if len(c.args) == 2 else "_ or _ or _"
        return None
    if isinstance(c, And):
        pos = [a for a in c.args if isinstance(a, Atom)]
        neg = [a for a in c.args if isinstance(a, Not) and isinstance(a.arg, Atom)]
        if len(pos) + len(neg) != len(c.args):
            return None
        shape = (len(pos), len(neg))
        return {
            (2, 0): "_ that are also _",
            (3, 0): "_ that are also both _ and _",
            (1, 1): "_ that are not _",
            (2, 1): "_ that are also _ but not _",
        }.get(shape)
    return None
