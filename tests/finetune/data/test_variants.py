"""Quest+Variants: gold sets against brute force, groups, and the QUEST-format round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.finetune.data import (
    VARIANT_SHAPES,
    TrainingSet,
    build_variants,
    compose_variants,
    load_quest_training_set,
    quest_text,
    write_quest_format,
)
from logic_rag.query import Relation, relation

# Each shape written directly as a per-document predicate over (in A, in B, in C).
BRUTE = {
    "A": lambda a, b, c: a,
    "B": lambda a, b, c: b,
    "C": lambda a, b, c: c,
    "A&B": lambda a, b, c: a and b,
    "A|B": lambda a, b, c: a or b,
    "A-B": lambda a, b, c: a and not b,
    "A&B&C": lambda a, b, c: a and b and c,
    "A&B-C": lambda a, b, c: a and b and not c,
    "A|B|C": lambda a, b, c: a or b or c,
}

atom_maps = st.dictionaries(
    st.sampled_from([f"Atom {i}" for i in range(8)]),
    st.frozensets(st.integers(0, 24).map(lambda i: f"d{i}"), min_size=1, max_size=14),
    min_size=3,
    max_size=8,
)


def _triple(group: list) -> tuple[str | None, ...]:
    """(A, B, C) of a group, read back from each variant's atoms and its shape's slots."""
    slots = {name: idx for name, _, idx in VARIANT_SHAPES}
    letters: list[str | None] = [None, None, None]
    for q in group:
        shape = q.query_id.split(":")[1]
        for slot, text in zip(slots[shape], _slot_atoms(q.logical_query), strict=True):
            assert letters[slot] in (None, text)
            letters[slot] = text
    return tuple(letters)


def _slot_atoms(q):
    from logic_rag.query import negated_atoms, positive_atoms

    return [a.text for a in positive_atoms(q)] + [a.text for a in negated_atoms(q)]


@settings(max_examples=40, deadline=None)
@given(atom_maps, st.integers(0, 3), st.integers(1, 4), st.integers(4, 14))
def test_variant_gold_sets_match_brute_force(sets, seed, min_size, max_size) -> None:
    queries = build_variants(sets, seed=seed, min_size=min_size, max_size=max_size, min_variants=1)
    universe = set().union(*sets.values())
    groups: dict[str, list] = {}
    for q in queries:
        groups.setdefault(q.group, []).append(q)
    for members in groups.values():
        a, b, c = _triple(members)
        for q in members:
            shape = q.query_id.split(":")[1]
            expected = {
                d
                for d in universe
                if BRUTE[shape](d in sets.get(a, ()), d in sets.get(b, ()), d in sets.get(c, ()))
            }
            assert set(q.gold) == expected, (shape, a, b, c)
            assert min_size <= len(q.gold) <= max_size
            assert set(_slot_atoms(q.logical_query)) <= {a, b, c}
            assert q.template is not None and q.text == quest_text(q.logical_query)
            named = set().union(*(sets[n] for n in _slot_atoms(q.logical_query)))
            assert set(q.distractors) == named - set(q.gold)
    assert len({q.query_id for q in queries}) == len(queries)


def test_compose_variants_all_nine() -> None:
    sets = {"A": frozenset("1234"), "B": frozenset("3456"), "C": frozenset("2357")}
    got = {name: set(g) for name, _, g in compose_variants(("A", "B", "C"), sets)}
    assert got == {
        "A": set("1234"),
        "B": set("3456"),
        "C": set("2357"),
        "A&B": set("34"),
        "A|B": set("123456"),
        "A-B": set("12"),
        "A&B&C": {"3"},
        "A&B-C": {"4"},
        "A|B|C": set("1234567"),
    }


def _toy_atoms() -> dict[str, set[str]]:
    # Two overlapping "regional" atom families over 40 documents.
    return {
        "Birds of Kenya": {f"d{i}" for i in range(0, 20)},
        "Birds of Uganda": {f"d{i}" for i in range(10, 30)},
        "Birds of Tanzania": {f"d{i}" for i in range(5, 15)} | {f"d{i}" for i in range(25, 35)},
        "Trees of Peru": {f"d{i}" for i in range(30, 40)},
    }


def test_groups_prefer_same_domain_and_relations_follow_logic() -> None:
    atoms = _toy_atoms()
    queries = build_variants(atoms, seed=0, min_size=2)
    assert queries
    groups: dict[str, list] = {}
    for q in queries:
        groups.setdefault(q.group, []).append(q)
    for members in groups.values():
        a, b, _ = _triple(members)
        if a.startswith("Birds"):  # a same-head B exists for every bird atom: it is preferred
            assert b.startswith("Birds"), (a, b)
    documents = {f"d{i}": f"text {i}" for i in range(40)}
    ts = TrainingSet(queries, documents)
    rel = ts.relations()
    index = {q.query_id: i for i, q in enumerate(queries)}
    for qi in queries:
        for qj in queries:
            if qi is qj or qi.group != qj.group:
                continue
            r = relation(qi.logical_query, qj.logical_query)
            pair = (index[qi.query_id], index[qj.query_id])
            if r is Relation.SUBSET:
                assert pair in rel.subset_pairs or set(qi.gold) == set(qj.gold)
            if r is Relation.EXCLUSION:
                assert pair in rel.exclusion_pairs
    assert rel.subset_pairs and rel.exclusion_pairs


def test_paraphrase_hook_and_group_cap() -> None:
    queries = build_variants(_toy_atoms(), seed=1, groups=1, paraphrase=str.upper)
    assert len({q.group for q in queries}) == 1
    assert all(q.text == quest_text(q.logical_query).upper() for q in queries)
    with pytest.raises(ValueError):
        build_variants(_toy_atoms(), min_size=5, max_size=2)


def test_write_and_reload_quest_format(tmp_path) -> None:
    queries = build_variants(_toy_atoms(), seed=0)
    path = tmp_path / "variants.jsonl"
    write_quest_format(queries, path)
    documents = {f"d{i}": f"text {i}" for i in range(40)}
    atoms_path = tmp_path / "atoms.jsonl"
    import json

    atoms_path.write_text(
        "".join(json.dumps({"atom": k, "docs": sorted(v)}) + "\n" for k, v in _toy_atoms().items())
    )
    ts = load_quest_training_set(path, documents, atoms=atoms_path)
    assert [q.query_id for q in ts.queries] == [q.query_id for q in queries]
    for a, b in zip(ts.queries, queries, strict=True):
        assert (a.gold, a.group, a.template, a.text) == (b.gold, b.group, b.template, b.text)
        assert a.logical_query == b.logical_query
        assert a.distractors == b.distractors


def _atoms_file(tmp_path, rows) -> object:
    import json

    path = tmp_path / "atoms.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_add_variants_uses_only_the_split_and_never_repeats_a_query(tmp_path) -> None:
    from logic_rag.finetune.data import add_variants

    documents = {f"d{i}": f"text {i}" for i in range(40)}
    toy = _toy_atoms()
    rows = [{"atom": k, "docs": sorted(v), "split": "train"} for k, v in toy.items()]
    rows.append({"atom": "Held-out things", "docs": ["d1", "d2", "d3"], "split": "test"})
    atoms = _atoms_file(tmp_path, rows)
    # The base set is itself Quest+Variants of the same atoms (like the WordNet set).
    base = TrainingSet(build_variants(toy, seed=0), documents)
    assert len(add_variants(base, atoms, seed=0)) == len(base)
    empty = TrainingSet([], documents)
    grown = add_variants(empty, atoms, seed=0)
    assert len(grown) == len(base)
    assert all(q.query_id.startswith("variant:") for q in grown.queries)
    assert all(q.group.startswith("variant:") for q in grown.queries)
    assert not any("Held-out" in q.text for q in grown.queries)


def test_add_variants_names_file_and_line_of_a_bad_row(tmp_path) -> None:
    from logic_rag.errors import CorpusFormatError
    from logic_rag.finetune.data import add_variants

    path = tmp_path / "atoms.jsonl"
    path.write_text('{"atom": "A", "docs": ["d1"]}\n{"atom": "B"}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"atoms.jsonl:2"):
        add_variants(TrainingSet([], {"d1": "x"}), path)
