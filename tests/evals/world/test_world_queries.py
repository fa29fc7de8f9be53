"""Query composition helpers: template algebra, size rules, markup, atom partition."""

from __future__ import annotations

import random

import pytest

from logic_rag.evals.world import TEMPLATES, evaluate_template, original_query, size_rule_violation
from logic_rag.evals.world.queries import QueryPool, partition_atoms

A, B, C = frozenset({1, 2, 3, 4}), frozenset({3, 4, 5}), frozenset({4, 9})


def test_template_algebra():
    assert evaluate_template("_", [A]) == A
    assert evaluate_template("_ or _ or _", [A, B, C]) == {1, 2, 3, 4, 5, 9}
    assert evaluate_template("_ that are also both _ and _", [A, B, C]) == {4}
    assert evaluate_template("_ that are not _", [A, B]) == {1, 2}
    assert evaluate_template("_ that are also _ but not _", [A, B, C]) == {3}
    with pytest.raises(ValueError):
        evaluate_template("_ or _", [A])
    with pytest.raises(ValueError):
        evaluate_template("_ and _", [A, B])


def test_size_rules():
    assert size_rule_violation("_ that are not _", [A, B]) is None
    assert "removes nothing" in size_rule_violation("_ that are not _", [A, frozenset({7})])
    assert "outside" in size_rule_violation("_", [frozenset({1})])
    assert "outside" in size_rule_violation("_", [frozenset(range(21))])
    assert size_rule_violation("_", [frozenset(range(20))]) is None
    assert "adds nothing" in size_rule_violation("_ or _", [A, frozenset({1, 2})])
    assert "removes nothing" in size_rule_violation("_ that are also _", [A, frozenset({1, 2})])
    assert "outside" in size_rule_violation("_ that are also _ but not _", [A, B, C])


def test_original_query_markup():
    assert original_query("_ that are also _ but not _", ["X", "Y", "Z"]) == (
        "<mark>X</mark> that are also <mark>Y</mark> but not <mark>Z</mark>"
    )
    with pytest.raises(ValueError):
        original_query("_ or _", ["X"])


def test_partition_is_disjoint_and_complete():
    atoms = {"films": [f"f{i}" for i in range(50)], "books": [f"b{i}" for i in range(30)]}
    split_of = partition_atoms(atoms, {"train": 3, "val": 1, "test": 1}, random.Random(0))
    assert set(split_of) == {a for v in atoms.values() for a in v}
    assert sum(1 for v in split_of.values() if v == "train") == 30 + 18


def test_pool_samples_obey_rules():
    rng = random.Random(0)
    members = {f"a{i}": frozenset(rng.sample(range(60), rng.randrange(2, 25))) for i in range(40)}
    pool = QueryPool(members)
    for template in TEMPLATES:
        got = [pool.sample(template, rng) for _ in range(300)]
        got = [g for g in got if g]
        assert got, template
        for atoms in got:
            assert size_rule_violation(template, [members[a] for a in atoms]) is None
