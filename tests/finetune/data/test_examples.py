"""The QUEST-format loader, relations from gold sets, and the two dataset layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.finetune.data import (
    TrainingDataError,
    TrainingSet,
    TrainQuery,
    group_by_shared_atoms,
    load_quest_training_set,
    to_contrastive_dataset,
    to_lore_dataset,
)
from logic_rag.query import Relation, atoms, evaluate, relation


def _atom_sets(world: Path) -> dict[str, set[str]]:
    rows = [json.loads(line) for line in (world / "atoms.jsonl").read_text().splitlines()]
    return {r["atom"]: set(r["docs"]) for r in rows}


@pytest.fixture(scope="module")
def ts(train_world) -> TrainingSet:
    return load_quest_training_set(
        train_world / "train.jsonl",
        train_world / "documents.jsonl",
        atoms=train_world / "atoms.jsonl",
    )


def test_loader_reads_gold_logic_and_documents(ts, train_world) -> None:
    assert len(ts) == 120 and len(ts.documents) == 300
    first = json.loads((train_world / "documents.jsonl").read_text().splitlines()[0])
    # Documents are embedded as "title\ntext", as the indexer does.
    assert ts.documents[first["title"]] == f"{first['title']}\n{first['text']}"
    atom_sets = _atom_sets(train_world)
    universe = set(ts.documents)
    for q in ts.queries:
        assert q.logical_query is not None and q.template is not None
        # The gold set is exactly the logical query evaluated on the atoms' gold sets.
        assert set(q.gold) == evaluate(q.logical_query, atom_sets, universe), q.query_id


def test_distractors_match_brute_force(ts, train_world) -> None:
    atom_sets = _atom_sets(train_world)
    with_distractors = 0
    for q in ts.queries:
        names = [a.text for a in atoms(q.logical_query)]
        expected = set().union(*(atom_sets[n] for n in names)) - set(q.gold)
        assert set(q.distractors) == expected
        assert len(q.distractors) == len(set(q.distractors))
        with_distractors += bool(expected)
    assert with_distractors > 20  # AND / NOT queries have near misses


def test_groups_are_pieces_of_shared_atom_components(ts) -> None:
    names = [{a.text for a in atoms(q.logical_query)} for q in ts.queries]
    # Brute-force connected components of the "shares an atom" graph.
    component = list(range(len(names)))

    def find(i: int) -> int:
        while component[i] != i:
            i = component[i]
        return i

    for i in range(len(names)):
        for j in range(i):
            if names[i] & names[j]:
                component[find(i)] = find(j)
    members: dict[str, list[int]] = {}
    for i, q in enumerate(ts.queries):
        if q.group is not None:
            members.setdefault(q.group, []).append(i)
    assert members
    for ids in members.values():
        assert 2 <= len(ids) <= 12
        assert len({find(i) for i in ids}) == 1


def test_group_by_shared_atoms_caps_and_connects() -> None:
    chain = [["a", "b"], ["b", "c"], ["c", "d"], ["d", "e"], ["e", "f"], ["x"], ["y", "z"], ["z"]]
    groups = group_by_shared_atoms(chain, max_group_size=2)
    assert groups[5] is None
    assert groups[6] == groups[7] is not None
    # Five chained queries cut in breadth-first order: two pairs, the leftover one ungrouped.
    assert groups[0] == groups[1] != groups[2] == groups[3]
    assert groups[4] is None and groups[0] is not None and groups[2] is not None
    assert len(set(group_by_shared_atoms(chain, max_group_size=5)[:5])) == 1
    with pytest.raises(ValueError):
        group_by_shared_atoms(chain, max_group_size=1)


def test_relations_match_brute_force_and_logic(ts) -> None:
    rel = ts.relations()
    gold = [set(q.gold) for q in ts.queries]
    expected_subset, expected_exclusion = set(), set()
    for i, qi in enumerate(ts.queries):
        for j, qj in enumerate(ts.queries):
            if i == j or qi.group is None or qi.group != qj.group:
                continue
            if gold[i] < gold[j]:
                expected_subset.add((i, j))
            if not gold[i] & gold[j]:
                expected_exclusion.add((i, j))
            # What holds for every world (logic) must hold on these gold sets.
            r = relation(qi.logical_query, qj.logical_query)
            if r is Relation.SUBSET:
                assert gold[i] <= gold[j]
            if r is Relation.EXCLUSION:
                assert not gold[i] & gold[j]
    assert rel.subset_pairs == expected_subset and expected_subset
    assert rel.exclusion_pairs == expected_exclusion
    di = ts.doc_index()
    assert rel.gold_sets == {i: frozenset(di[d] for d in g) for i, g in enumerate(gold)}


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _docs(tmp_path: Path) -> Path:
    rows = [{"title": t, "text": f"About {t}."} for t in ("A", "B", "C")]
    return _write(tmp_path / "docs.jsonl", [json.dumps(r) for r in rows])


def test_loader_errors_name_file_and_line(tmp_path) -> None:
    docs = _docs(tmp_path)
    good = json.dumps({"query": "q", "docs": ["A"]})
    bad_json = _write(tmp_path / "q1.jsonl", [good, "", "{not json"])
    with pytest.raises(CorpusFormatError, match=r"q1\.jsonl:3: not valid JSON"):
        load_quest_training_set(bad_json, docs)
    bad_docs = _write(tmp_path / "q2.jsonl", [good, json.dumps({"query": "q", "docs": "A"})])
    with pytest.raises(CorpusFormatError, match=r"q2\.jsonl:2: field 'docs'"):
        load_quest_training_set(bad_docs, docs)
    no_query = _write(tmp_path / "q3.jsonl", [json.dumps({"docs": ["A"]})])
    with pytest.raises(CorpusFormatError, match=r"q3\.jsonl:1: field 'query'"):
        load_quest_training_set(no_query, docs)
    missing = _write(tmp_path / "q4.jsonl", [good, json.dumps({"query": "r", "docs": ["A", "Z"]})])
    with pytest.raises(CorpusFormatError, match=r"q4\.jsonl:2: gold document 'Z'.*missing='drop'"):
        load_quest_training_set(missing, docs)
    dropped = load_quest_training_set(missing, docs, missing="drop")
    assert [q.gold for q in dropped.queries] == [("A",), ("A",)]
    assert len(load_quest_training_set(missing, docs, limit=1)) == 1


def test_training_set_rejects_unknown_documents() -> None:
    with pytest.raises(TrainingDataError, match="not in the documents"):
        TrainingSet([TrainQuery("q", "text", ("X",))], {"A": "a"})
    with pytest.raises(TrainingDataError, match="duplicate"):
        TrainingSet([TrainQuery("q", "t", ("A",)), TrainQuery("q", "u", ("A",))], {"A": "a"})


def test_quest_sample_parses(shared_data) -> None:
    path = shared_data / "quest" / "quest_train_sample20.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    documents = {d: d for r in rows for d in r["docs"]}  # no corpus is shipped; ids suffice
    ts = load_quest_training_set(path, documents)
    assert len(ts) == 20
    assert all(q.logical_query is not None for q in ts.queries)
    assert [q.template for q in ts.queries] == [r["metadata"]["template"] for r in rows]


def test_contrastive_positives_resample_reproducibly(ts) -> None:
    data = to_contrastive_dataset(ts, seed=3)
    assert data.column_names == ["anchor", "positive", "label"]
    di = ts.doc_index()
    texts = list(ts.documents.values())
    big = max(range(len(ts)), key=lambda i: len(ts.queries[i].gold))
    q = ts.queries[big]
    draws = [data[big] for _ in range(2 * len(q.gold))]
    gold_ids = {di[d] for d in q.gold}
    for row in draws:
        assert row["anchor"] == q.text
        assert row["label"][0] == big and row["label"][1] in gold_ids
        assert row["positive"] == texts[row["label"][1]]
    seen = [row["label"][1] for row in draws]
    # One full pass visits every gold document once, then a reshuffled pass follows.
    assert set(seen[: len(q.gold)]) == gold_ids == set(seen[len(q.gold) :])
    again = to_contrastive_dataset(ts, seed=3)
    assert [again[big]["label"][1] for _ in draws] == seen
    other = to_contrastive_dataset(ts, seed=4)
    assert [other[big]["label"][1] for _ in draws] != seen
    gi = ts.group_index()
    labels = data[list(range(len(ts)))]["label"]
    assert [lab[2] for lab in labels] == [
        gi[x.group] if x.group is not None else -1 for x in ts.queries
    ]


def test_lore_layout(ts) -> None:
    data = to_lore_dataset(ts, num_distractors=2, num_negatives=3, seed=1)
    assert data.column_names == ["query", *[f"cand_{i}" for i in range(6)], "label"]
    by_text = {v: k for k, v in ts.documents.items()}
    padded = 0
    for i, q in enumerate(ts.queries):
        row = data[i]
        tiers = row["label"]
        cands = [row[f"cand_{c}"] for c in range(6)]
        assert tiers[0] == 1 and by_text[cands[0]] in q.gold
        for c in (1, 2):
            if tiers[c] == 0:
                assert by_text[cands[c]] in q.distractors
            else:
                assert tiers[c] == -100 and cands[c] == ""
                padded += 1
        for c in (3, 4, 5):
            assert tiers[c] == -1
            doc = by_text[cands[c]]
            assert doc not in q.gold and doc not in q.distractors
    assert padded > 0  # OR queries have no distractors
    assert to_lore_dataset(ts, num_distractors=2, num_negatives=3, seed=1)[:] == data[:]


def test_split_by_group_keeps_groups_whole(ts) -> None:
    parts = ts.split_by_group({"train": 0.8, "val": 0.2}, seed=0)
    ids = [q.query_id for p in parts.values() for q in p.queries]
    assert sorted(ids) == sorted(q.query_id for q in ts.queries)
    train_groups = {q.group for q in parts["train"].queries if q.group}
    val_groups = {q.group for q in parts["val"].queries if q.group}
    assert not train_groups & val_groups
    assert 0.6 < len(parts["train"]) / len(ts) < 0.95
