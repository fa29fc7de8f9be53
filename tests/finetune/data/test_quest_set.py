"""The real QUEST-attr experiment folder: split by atom, atom sets read off the queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag.finetune.data import build_quest_set, quest_atom_sets


def _atoms(row: dict) -> set[str]:
    from logic_rag.evals.quest.data import marked_atoms

    return {" ".join(a.split()).lower() for a in marked_atoms(row["original_query"])}


def test_quest_set_is_split_by_atom_and_sets_are_sound(shared_data: Path, tmp_path: Path) -> None:
    src = shared_data / "quest" / "attr"
    if not (src / "train_dev.jsonl").is_file():
        pytest.skip(f"QUEST-attr not found at {src}")
    out = build_quest_set(tmp_path / "quest", source=src)
    train = [json.loads(line) for line in (out / "train.jsonl").open()]
    test = [json.loads(line) for line in (out / "test.jsonl").open()]
    assert len(train) + len(test) == sum(1 for _ in (src / "train_dev.jsonl").open())
    assert not set().union(*map(_atoms, train)) & set().union(*map(_atoms, test))
    assert (out / "documents.jsonl").is_symlink()  # read in place, never copied
    rows = [json.loads(line) for line in (out / "atoms.jsonl").open()]
    assert len({r["atom"] for r in rows}) == len(rows)
    gold = {r["query"]: set(r["docs"]) for r in train + test}
    for row in rows:
        # Only complete sets may feed Quest+Variants (split "train").
        assert (row["split"] == "train") == (
            row["complete"] and row["atom"].lower() in set().union(*map(_atoms, train))
        )
    # A complete atom's set contains the gold set of its "_" query.
    singles = {
        next(iter(_atoms(r))): set(r["docs"]) for r in train if r["metadata"]["template"] == "_"
    }
    for row in rows:
        if row["split"] == "train":
            assert singles[row["atom"].lower()] <= set(row["docs"])
    # Every member of an atom of an intersection query is backed by a gold page.
    pages = set().union(*gold.values())
    assert all(set(r["docs"]) <= pages for r in rows)
    # Idempotent: a second build keeps the files.
    stamp = (out / "train.jsonl").stat().st_mtime_ns
    assert build_quest_set(tmp_path / "quest", source=src) == out
    assert (out / "train.jsonl").stat().st_mtime_ns == stamp


def test_atom_sets_of_a_tiny_record_set() -> None:
    records = [
        {
            "original_query": "<mark>Red birds</mark>",
            "docs": ["a", "b"],
            "metadata": {"template": "_", "domain": "birds"},
        },
        {
            "original_query": "<mark>Blue birds</mark> that are also <mark>Owls</mark>",
            "docs": ["c"],
            "metadata": {"template": "_ that are also _", "domain": "birds"},
        },
        {
            "original_query": "<mark>Red birds</mark> that are not <mark>Big birds</mark>",
            "docs": ["a"],
            "metadata": {"template": "_ that are not _", "domain": "birds"},
        },
    ]
    rows = {r["atom"]: r for r in quest_atom_sets(records, {"a", "b", "c"}, "train")}
    assert rows["Red birds"] == {
        "atom": "Red birds",
        "domain": "birds",
        "docs": ["a", "b"],
        "complete": True,
        "inferred": 0,
        "split": "train",
    }
    # "Red birds that are not Big birds" keeps only a: b, known red, must be big.
    assert rows["Big birds"]["docs"] == ["b"] and rows["Big birds"]["inferred"] == 1
    assert rows["Owls"]["docs"] == ["c"] and not rows["Owls"]["complete"]
    assert rows["Owls"]["split"] == "train-partial"
    dev = {r["atom"]: r for r in quest_atom_sets(records, {"a", "b", "c"}, "test")}
    assert {r["split"] for r in dev.values()} == {"test"}
