"""The ``LogicalQuery`` algebra: atoms combined with AND, OR and NOT.

A logical query names a *set* of documents: an :class:`Atom` is the set of documents that
satisfy one simple information need ("Orchids of Malaysia"), :class:`And` is intersection,
:class:`Or` is union and :class:`Not` is complement within a universe. Set difference
``A \\ B`` is written ``And(A, Not(B))``. Every other part of logic-rag (encoders,
composers, LogiCoL training, evaluation) consumes this one representation, so it is kept
small, immutable and hashable.

Semantics are defined twice on purpose: :func:`evaluate` over concrete sets (what the
result-set composer does) and :func:`truth` over truth assignments (what :func:`relation`
enumerates). The tests check each against brute force and against each other.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "Atom",
    "And",
    "Or",
    "Not",
    "LogicalQuery",
    "Relation",
    "MAX_RELATION_ATOMS",
    "QUERY_JSON_SCHEMA",
    "canonical",
    "sort_key",
    "to_json",
    "from_json",
    "atoms",
    "positive_atoms",
    "negated_atoms",
    "positive_part",
    "evaluate",
    "truth",
    "relation",
    "render",
]


@dataclass(frozen=True, slots=True)
class Atom:
    """One simple information need, e.g. ``Atom("Orchids of Malaysia")``."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Atom text must be a str, got {type(self.text).__name__}")
        if not self.text.strip():
            raise ValueError("Atom text must not be empty or whitespace")


def _check_args(kind: str, args: Any) -> tuple[LogicalQuery, ...]:
    if isinstance(args, str | bytes) or not isinstance(args, Sequence):
        raise TypeError(f"{kind} args must be a tuple of queries, got {type(args).__name__}")
    args = tuple(args)
    if not args:
        raise ValueError(f"{kind} needs at least one argument")
    for arg in args:
        if not isinstance(arg, Atom | And | Or | Not):
            raise TypeError(f"{kind} argument {arg!r} is not a LogicalQuery node")
    return args


@dataclass(frozen=True, slots=True)
class And:
    """Intersection of its arguments (documents that satisfy every argument)."""

    args: tuple[LogicalQuery, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", _check_args("And", self.args))


@dataclass(frozen=True, slots=True)
class Or:
    """Union of its arguments (documents that satisfy at least one argument)."""

    args: tuple[LogicalQuery, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", _check_args("Or", self.args))


@dataclass(frozen=True, slots=True)
class Not:
    """Complement of its argument within the universe of documents."""

    arg: LogicalQuery

    def __post_init__(self) -> None:
        if not isinstance(self.arg, Atom | And | Or | Not):
            raise TypeError(f"Not argument {self.arg!r} is not a LogicalQuery node")


LogicalQuery: TypeAlias = Atom | And | Or | Not


class Relation(enum.Enum):
    """How the answer sets of two queries relate for *every* possible set of atom answers."""

    EQUAL = "equal"
    SUBSET = "subset"  # q1 is a proper subset of q2
    SUPERSET = "superset"  # q1 is a proper superset of q2
    EXCLUSION = "exclusion"  # q1 and q2 never share a document
    OVERLAP = "overlap"  # none of the above


#: Truth-table enumeration is exponential; beyond this many distinct atoms relation() refuses.
MAX_RELATION_ATOMS = 16

# ---------------------------------------------------------------------------- canonical form


def sort_key(q: LogicalQuery) -> tuple[Any, ...]:
    """A total, deterministic order on queries: atoms first, then NOT, AND, OR."""
    if isinstance(q, Atom):
        return (0, q.text)
    if isinstance(q, Not):
        return (1, sort_key(q.arg))
    if isinstance(q, And):
        return (2, tuple(sort_key(a) for a in q.args))
    if isinstance(q, Or):
        return (3, tuple(sort_key(a) for a in q.args))
    raise TypeError(f"not a LogicalQuery: {q!r}")


def canonical(q: LogicalQuery) -> LogicalQuery:
    """Normal form used for comparison and caching.

    Removes double negation, flattens nested And/Or of the same kind, removes duplicate
    arguments, sorts arguments by :func:`sort_key` and collapses one-argument And/Or. It
    preserves semantics exactly (checked by property tests) and is idempotent. It does not
    apply De Morgan or absorption, so ``And(A, Not(B))`` keeps the shape of a QUEST
    template.
    """
    if isinstance(q, Atom):
        return q
    if isinstance(q, Not):
        inner = canonical(q.arg)
        if isinstance(inner, Not):
            return inner.arg
        return Not(inner)
    if isinstance(q, And | Or):
        kind = type(q)
        flat: dict[LogicalQuery, None] = {}
        for arg in q.args:
            c = canonical(arg)
            if isinstance(c, kind):
                for sub in c.args:
                    flat[sub] = None
            else:
                flat[c] = None
        args = sorted(flat, key=sort_key)
        if len(args) == 1:
            return args[0]
        return kind(tuple(args))
    raise TypeError(f"not a LogicalQuery: {q!r}")


# -------------------------------------------------------------------------------- JSON form

#: JSON schema of :func:`to_json` output; the LLM decomposer validates model output with it.
QUERY_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$ref": "#/$defs/query",
    "$defs": {
        "query": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"atom": {"type": "string", "minLength": 1, "pattern": r"\S"}},
                    "required": ["atom"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {
                        "op": {"enum": ["and", "or"]},
                        "args": {
                            "type": "array",
                            "items": {"$ref": "#/$defs/query"},
                            "minItems": 1,
                        },
                    },
                    "required": ["op", "args"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {
                        "op": {"const": "not"},
                        "args": {
                            "type": "array",
                            "items": {"$ref": "#/$defs/query"},
                            "minItems": 1,
                            "maxItems": 1,
                        },
                    },
                    "required": ["op", "args"],
                    "additionalProperties": False,
                },
            ]
        }
    },
}


def to_json(q: LogicalQuery) -> dict[str, Any]:
    """``{"atom": text}`` or ``{"op": "and"|"or"|"not", "args": [...]}`` (NOT has one arg)."""
    if isinstance(q, Atom):
        return {"atom": q.text}
    if isinstance(q, Not):
        return {"op": "not", "args": [to_json(q.arg)]}
    if isinstance(q, And):
        return {"op": "and", "args": [to_json(a) for a in q.args]}
    if isinstance(q, Or):
        return {"op": "or", "args": [to_json(a) for a in q.args]}
    raise TypeError(f"not a LogicalQuery: {q!r}")


def from_json(d: Any) -> LogicalQuery:
    """Inverse of :func:`to_json`; raises ``ValueError`` naming the JSON path of a problem."""
    return _from_json(d, "$")


def _from_json(d: Any, path: str) -> LogicalQuery:
    if not isinstance(d, dict):
        raise ValueError(
            f"{path}: expected an object like {{'atom': ...}} or {{'op': ..., 'args': [...]}},"
            f" got {type(d).__name__}"
        )
    if "atom" in d:
        extra = set(d) - {"atom"}
        if extra:
            raise ValueError(
                f"{path}: an atom object has only the key 'atom'; remove {sorted(extra)}"
            )
        text = d["atom"]
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{path}.atom: must be a non-empty string, got {text!r}")
        return Atom(text)
    if "op" not in d:
        raise ValueError(f"{path}: object has neither 'atom' nor 'op' (keys: {sorted(d)})")
    extra = set(d) - {"op", "args"}
    if extra:
        raise ValueError(
            f"{path}: an operator object has keys 'op' and 'args'; remove {sorted(extra)}"
        )
    op = d["op"]
    if op not in ("and", "or", "not"):
        raise ValueError(f"{path}.op: must be 'and', 'or' or 'not', got {op!r}")
    args = d.get("args")
    if not isinstance(args, list) or not args:
        raise ValueError(f"{path}.args: must be a non-empty list of query objects, got {args!r}")
    children = [_from_json(a, f"{path}.args[{i}]") for i, a in enumerate(args)]
    if op == "not":
        if len(children) != 1:
            raise ValueError(f"{path}.args: 'not' takes exactly one argument, got {len(children)}")
        return Not(children[0])
    return And(tuple(children)) if op == "and" else Or(tuple(children))


# ------------------------------------------------------------------------------------ atoms


def _walk(q: LogicalQuery, negated: bool) -> Iterator[tuple[Atom, bool]]:
    if isinstance(q, Atom):
        yield q, negated
    elif isinstance(q, Not):
        yield from _walk(q.arg, not negated)
    elif isinstance(q, And | Or):
        for arg in q.args:
            yield from _walk(arg, negated)
    else:
        raise TypeError(f"not a LogicalQuery: {q!r}")


def atoms(q: LogicalQuery) -> list[Atom]:
    """Distinct atoms in order of first appearance (left to right)."""
    return list(dict.fromkeys(a for a, _ in _walk(q, False)))


def positive_atoms(q: LogicalQuery) -> list[Atom]:
    """Atoms that occur under an even number of NOTs (they add documents)."""
    return list(dict.fromkeys(a for a, neg in _walk(q, False) if not neg))


def negated_atoms(q: LogicalQuery) -> list[Atom]:
    """Atoms that occur under an odd number of NOTs (they remove documents)."""
    return list(dict.fromkeys(a for a, neg in _walk(q, False) if neg))


def positive_part(q: LogicalQuery) -> LogicalQuery | None:
    """``q`` without its negated conjuncts: ``A AND B NOT C`` -> ``A AND B``.

    What a candidate source should search for: documents must satisfy the positive part,
    and the negated part only removes some of them. A bare negation has no positive part
    (``None``); a union that holds a negation is returned unchanged (dropping the negated
    branch would change which documents it admits).
    """
    if isinstance(q, Not):
        return None
    if isinstance(q, And):
        kept = [p for a in q.args if (p := positive_part(a)) is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else And(tuple(kept))
    if isinstance(q, Or) and any(positive_part(a) != a for a in q.args):
        return q
    return q


# -------------------------------------------------------------------------------- semantics


def evaluate(
    q: LogicalQuery, atom_sets: Mapping[str, AbstractSet[Any]], universe: AbstractSet[Any]
) -> set[Any]:
    """The set of items of ``universe`` that satisfy ``q``.

    ``atom_sets`` maps atom text to the items that satisfy that atom; items outside
    ``universe`` are ignored, so the result is always a subset of ``universe``.
    """
    universe = set(universe)

    def go(node: LogicalQuery) -> set[Any]:
        if isinstance(node, Atom):
            try:
                return set(atom_sets[node.text]) & universe
            except KeyError:
                raise KeyError(
                    f"atom {node.text!r} has no entry in atom_sets; pass a set for every atom"
                    " (see logic_rag.query.atoms)"
                ) from None
        if isinstance(node, Not):
            return universe - go(node.arg)
        if isinstance(node, And):
            result = go(node.args[0])
            for arg in node.args[1:]:
                result &= go(arg)
            return result
        if isinstance(node, Or):
            result = set()
            for arg in node.args:
                result |= go(arg)
            return result
        raise TypeError(f"not a LogicalQuery: {node!r}")

    return go(q)


def truth(q: LogicalQuery, assignment: Mapping[str, bool]) -> bool:
    """Truth value of ``q`` when each atom text is assigned True or False."""
    if isinstance(q, Atom):
        try:
            return bool(assignment[q.text])
        except KeyError:
            raise KeyError(f"atom {q.text!r} has no truth value in the assignment") from None
    if isinstance(q, Not):
        return not truth(q.arg, assignment)
    if isinstance(q, And):
        return all(truth(a, assignment) for a in q.args)
    if isinstance(q, Or):
        return any(truth(a, assignment) for a in q.args)
    raise TypeError(f"not a LogicalQuery: {q!r}")


def relation(q1: LogicalQuery, q2: LogicalQuery) -> Relation:
    """Set relation between ``q1`` and ``q2`` that holds whatever the atoms' answer sets are.

    Decided by enumerating every truth assignment over the union of both queries' atoms:
    each assignment is one possible kind of document. ``EQUAL``: no document can be in one
    and not the other. ``SUBSET``: q1's documents are always q2's and some document can be
    in q2 only (``A AND B`` is a subset of ``A``). ``EXCLUSION``: no document can be in both
    (``A NOT B`` excludes ``A AND B``). An unsatisfiable query (``A AND NOT A``) is a subset
    of every satisfiable one, as the empty set is.
    """
    names = [a.text for a in atoms(q1)]
    names += [t for t in (a.text for a in atoms(q2)) if t not in set(names)]
    if len(names) > MAX_RELATION_ATOMS:
        raise ValueError(
            f"relation() enumerates 2^n truth assignments; {len(names)} distinct atoms is more"
            f" than MAX_RELATION_ATOMS={MAX_RELATION_ATOMS}"
        )
    both = only1 = only2 = False
    for values in itertools.product((False, True), repeat=len(names)):
        assignment = dict(zip(names, values, strict=True))
        t1, t2 = truth(q1, assignment), truth(q2, assignment)
        both |= t1 and t2
        only1 |= t1 and not t2
        only2 |= t2 and not t1
    if not only1 and not only2:
        return Relation.EQUAL
    if not only1:
        return Relation.SUBSET
    if not only2:
        return Relation.SUPERSET
    if not both:
        return Relation.EXCLUSION
    return Relation.OVERLAP


# -------------------------------------------------------------------------------- rendering


def render(q: LogicalQuery) -> str:
    """Readable one-line form: ``A AND B NOT C``, ``A OR B``, parentheses where nested."""

    def child(node: LogicalQuery) -> str:
        text = render(node)
        return text if isinstance(node, Atom) else f"({text})"

    if isinstance(q, Atom):
        return q.text
    if isinstance(q, Not):
        return f"NOT {child(q.arg)}"
    if isinstance(q, Or):
        return " OR ".join(child(a) for a in q.args)
    if isinstance(q, And):
        pos = [a for a in q.args if not isinstance(a, Not)]
        neg = [a for a in q.args if isinstance(a, Not)]
        if not pos:
            return " AND ".join(f"NOT {child(a.arg)}" for a in neg)
        text = " AND ".join(child(a) for a in pos)
        return text + "".join(f" NOT {child(a.arg)}" for a in neg)
    raise TypeError(f"not a LogicalQuery: {q!r}")
