"""The LogicalQuery algebra against brute force and hand-worked examples."""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.query.algebra import (
    MAX_RELATION_ATOMS,
    QUERY_JSON_SCHEMA,
    And,
    Atom,
    Not,
    Or,
    Relation,
    atoms,
    canonical,
    evaluate,
    from_json,
    negated_atoms,
    positive_atoms,
    relation,
    render,
    to_json,
    truth,
)

NAMES = ["a", "b", "c", "d"]
A, B, C, D = (Atom(n) for n in NAMES)

leaves = st.sampled_from(NAMES).map(Atom)
queries = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3).map(lambda xs: And(tuple(xs))),
        st.lists(children, min_size=1, max_size=3).map(lambda xs: Or(tuple(xs))),
        children.map(Not),
    ),
    max_leaves=8,
)
universes = st.integers(min_value=0, max_value=12).map(lambda n: set(range(n)))


@st.composite
def worlds(draw):
    """A universe and one (possibly overreaching) answer set per atom name."""
    universe = draw(universes)
    pool = list(range(15))  # includes items outside the universe on purpose
    sets = {n: set(draw(st.lists(st.sampled_from(pool), max_size=10))) for n in NAMES}
    return universe, sets


def member(q, x, sets, universe) -> bool:
    """Reference membership, written straight from the set definitions."""
    if x not in universe:
        return False
    if isinstance(q, Atom):
        return x in sets[q.text]
    if isinstance(q, Not):
        return not member(q.arg, x, sets, universe)
    if isinstance(q, And):
        return all(member(a, x, sets, universe) for a in q.args)
    return any(member(a, x, sets, universe) for a in q.args)


def all_assignments(names):
    for values in itertools.product((False, True), repeat=len(names)):
        yield dict(zip(names, values, strict=True))


# ------------------------------------------------------------------------------ semantics


def test_evaluate_hand_example() -> None:
    sets = {"a": {1, 2, 3}, "b": {2, 3, 4}, "c": {3, 9}}
    universe = set(range(6))
    assert evaluate(And((A, B)), sets, universe) == {2, 3}
    assert evaluate(Or((A, B)), sets, universe) == {1, 2, 3, 4}
    assert evaluate(And((A, Not(B))), sets, universe) == {1}
    assert evaluate(Not(A), sets, universe) == {0, 4, 5}
    assert evaluate(C, sets, universe) == {3}  # 9 lies outside the universe
    assert evaluate(And((A, B, Not(C))), sets, universe) == {2}


def test_evaluate_missing_atom_names_it() -> None:
    with pytest.raises(KeyError, match="'zzz'"):
        evaluate(Atom("zzz"), {}, {1})


@settings(max_examples=150, deadline=None)
@given(queries, worlds())
def test_evaluate_matches_brute_force(q, world) -> None:
    universe, sets = world
    expected = {x for x in universe if member(q, x, sets, universe)}
    assert evaluate(q, sets, universe) == expected


@settings(max_examples=100, deadline=None)
@given(queries, worlds())
def test_truth_agrees_with_evaluate(q, world) -> None:
    universe, sets = world
    result = evaluate(q, sets, universe)
    for x in universe:
        assignment = {n: x in sets[n] for n in NAMES}
        assert truth(q, assignment) == (x in result)


# ------------------------------------------------------------------------------ relation


@pytest.mark.parametrize(
    ("q1", "q2", "expected"),
    [
        (And((A, B)), A, Relation.SUBSET),
        (A, And((A, B)), Relation.SUPERSET),
        (Or((A, B)), A, Relation.SUPERSET),
        (And((A, Not(B))), And((A, B)), Relation.EXCLUSION),
        (And((A, Not(B))), A, Relation.SUBSET),
        (A, Not(A), Relation.EXCLUSION),
        (A, B, Relation.OVERLAP),
        (Not(Not(A)), A, Relation.EQUAL),
        (Not(And((A, B))), Or((Not(A), Not(B))), Relation.EQUAL),  # De Morgan
        (And((A, Or((B, C)))), Or((And((A, B)), And((A, C)))), Relation.EQUAL),
        (And((A, Not(A))), B, Relation.SUBSET),  # the empty set
        (And((A, B, Not(C))), And((A, B)), Relation.SUBSET),
        (Or((A, B)), Or((C, D)), Relation.OVERLAP),
    ],
)
def test_relation_examples(q1, q2, expected) -> None:
    assert relation(q1, q2) is expected


@settings(max_examples=150, deadline=None)
@given(queries, queries)
def test_relation_matches_canonical_model(q1, q2) -> None:
    """Each item of the universe is one truth assignment: set relations there decide it."""
    names = list(dict.fromkeys(a.text for a in atoms(q1) + atoms(q2)))
    universe = set(range(2 ** len(names)))
    sets = {n: {i for i in universe if i >> k & 1} for k, n in enumerate(names)}
    e1, e2 = evaluate(q1, sets, universe), evaluate(q2, sets, universe)
    if e1 == e2:
        expected = Relation.EQUAL
    elif e1 < e2:
        expected = Relation.SUBSET
    elif e1 > e2:
        expected = Relation.SUPERSET
    elif not e1 & e2:
        expected = Relation.EXCLUSION
    else:
        expected = Relation.OVERLAP
    assert relation(q1, q2) is expected


@settings(max_examples=150, deadline=None)
@given(queries, queries, worlds())
def test_relation_holds_on_random_worlds(q1, q2, world) -> None:
    universe, sets = world
    e1, e2 = evaluate(q1, sets, universe), evaluate(q2, sets, universe)
    rel = relation(q1, q2)
    if rel is Relation.EQUAL:
        assert e1 == e2
    elif rel is Relation.SUBSET:
        assert e1 <= e2
    elif rel is Relation.SUPERSET:
        assert e1 >= e2
    elif rel is Relation.EXCLUSION:
        assert not e1 & e2


def test_relation_refuses_too_many_atoms() -> None:
    big = And(tuple(Atom(f"x{i}") for i in range(MAX_RELATION_ATOMS + 1)))
    with pytest.raises(ValueError, match="MAX_RELATION_ATOMS"):
        relation(big, A)


# ----------------------------------------------------------------------------- canonical


def test_canonical_examples() -> None:
    assert canonical(Not(Not(A))) == A
    assert canonical(And((B, And((A, C)), A))) == And((A, B, C))
    assert canonical(Or((A,))) == A
    assert canonical(And((A, A))) == A
    assert canonical(And((Not(B), A))) == And((A, Not(B)))
    assert canonical(Or((Or((B, A)), And((C,))))) == Or((A, B, C))
    assert canonical(And((A, B))) == canonical(And((B, A)))


@settings(max_examples=150, deadline=None)
@given(queries)
def test_canonical_idempotent_and_semantics_preserving(q) -> None:
    c = canonical(q)
    assert canonical(c) == c
    for assignment in all_assignments(NAMES):
        assert truth(c, assignment) == truth(q, assignment)
    assert relation(c, q) is Relation.EQUAL


@settings(max_examples=100, deadline=None)
@given(queries)
def test_canonical_has_no_redundant_structure(q) -> None:
    def check(node):
        if isinstance(node, Not):
            assert not isinstance(node.arg, Not)
            check(node.arg)
        elif isinstance(node, And | Or):
            assert len(node.args) >= 2
            assert len(set(node.args)) == len(node.args)
            assert not any(isinstance(a, type(node)) for a in node.args)
            for a in node.args:
                check(a)

    check(canonical(q))


@settings(max_examples=100, deadline=None)
@given(st.lists(leaves, min_size=1, max_size=4), st.randoms())
def test_canonical_ignores_argument_order(args, rnd) -> None:
    shuffled = list(args)
    rnd.shuffle(shuffled)
    assert canonical(And(tuple(args))) == canonical(And(tuple(shuffled)))
    assert canonical(Or(tuple(args))) == canonical(Or(tuple(shuffled)))


# ---------------------------------------------------------------------------------- JSON


@settings(max_examples=150, deadline=None)
@given(queries)
def test_json_round_trip_and_schema(q) -> None:
    d = to_json(q)
    assert from_json(json.loads(json.dumps(d))) == q
    jsonschema.validate(d, QUERY_JSON_SCHEMA)


def test_to_json_shape() -> None:
    assert to_json(And((A, Not(B)))) == {
        "op": "and",
        "args": [{"atom": "a"}, {"op": "not", "args": [{"atom": "b"}]}],
    }


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ([], r"\$: expected an object"),
        ({"atom": ""}, r"\$\.atom: must be a non-empty string"),
        ({"atom": 3}, r"\$\.atom"),
        ({"atom": "x", "op": "and"}, r"only the key 'atom'"),
        ({"op": "xor", "args": [{"atom": "x"}]}, r"\$\.op: must be 'and', 'or' or 'not'"),
        ({"op": "and", "args": []}, r"\$\.args: must be a non-empty list"),
        ({"op": "and"}, r"\$\.args"),
        ({"op": "not", "args": [{"atom": "x"}, {"atom": "y"}]}, r"exactly one argument"),
        ({"op": "or", "args": [{"atom": "x"}, {"text": "y"}]}, r"\$\.args\[1\]: .*neither"),
        ({"op": "and", "args": [{"atom": "x"}], "weight": 2}, r"remove \['weight'\]"),
    ],
)
def test_from_json_errors_name_the_path(bad, message) -> None:
    with pytest.raises(ValueError, match=message):
        from_json(bad)


@pytest.mark.parametrize(
    "bad",
    [
        {"atom": ""},
        {"op": "not", "args": [{"atom": "x"}, {"atom": "y"}]},
        {"op": "and", "args": []},
        {"atom": "x", "op": "and"},
        {"op": "xor", "args": [{"atom": "x"}]},
    ],
)
def test_schema_rejects_what_from_json_rejects(bad) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, QUERY_JSON_SCHEMA)


# ------------------------------------------------------------------ nodes, atoms, render


def test_node_validation() -> None:
    with pytest.raises(ValueError, match="empty"):
        Atom("  ")
    with pytest.raises(ValueError, match="at least one"):
        And(())
    with pytest.raises(TypeError, match="tuple of queries"):
        Or("ab")
    with pytest.raises(TypeError, match="not a LogicalQuery"):
        Not("a")
    assert And([A, B]) == And((A, B))  # lists are accepted and frozen
    assert hash(And([A, B])) == hash(And((A, B)))


def test_atoms_in_first_appearance_order_with_polarity() -> None:
    q = And((C, Or((A, Not(B))), Not(And((A, D))), C))
    assert atoms(q) == [C, A, B, D]
    assert positive_atoms(q) == [C, A]
    assert negated_atoms(q) == [B, A, D]
    assert positive_atoms(Not(Not(A))) == [A]


@pytest.mark.parametrize(
    ("q", "text"),
    [
        (A, "a"),
        (And((A, B)), "a AND b"),
        (And((A, B, Not(C))), "a AND b NOT c"),
        (Or((A, B, C)), "a OR b OR c"),
        (And((A, Not(Or((B, C))))), "a NOT (b OR c)"),
        (And((Or((A, B)), C)), "(a OR b) AND c"),
        (Not(A), "NOT a"),
        (And((Not(A), Not(B))), "NOT a AND NOT b"),
    ],
)
def test_render(q, text) -> None:
    assert render(q) == text
