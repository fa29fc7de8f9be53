"""Loaders of QUEST-format query files and atom gold sets, on real files and broken ones."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.evals.quest import (
    QUEST_TEMPLATES,
    QuestQuery,
    load_atom_sets,
    load_quest_queries,
    marked_atoms,
)


def _raw(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_real_quest_sample(shared_data: Path) -> None:
    path = shared_data / "quest" / "quest_train_sample20.jsonl"
    queries = load_quest_queries(path)
    raw = _raw(path)
    assert len(queries) == len(raw) == 20
    assert [q.qid for q in queries] == [str(i) for i in range(20)]
    for q, r in zip(queries, raw, strict=True):
        assert isinstance(q, QuestQuery)
        assert q.query == r["query"]
        assert q.docs == frozenset(r["docs"])
        assert q.original_query == r["original_query"]
        assert q.template == r["metadata"]["template"]
        assert q.domain == r["metadata"]["domain"]
        assert q.template in QUEST_TEMPLATES
        # atoms come from the <mark> spans; the template has one slot per atom
        assert q.atoms is not None and len(q.atoms) == q.template.count("_")
        assert q.metadata == r["metadata"]
    neg = next(q for q in queries if q.template == "_ that are not _")
    assert neg.atoms == ("Novels by Robert B. Parker", "Novels set in Massachusetts")


def test_real_limit_quest_format(shared_data: Path) -> None:
    path = shared_data / "limit" / "limit_quest_format_queries.jsonl"
    queries = load_quest_queries(path)
    raw = _raw(path)
    assert len(queries) == 700
    assert [q.qid for q in queries] == [str(r["id"]) for r in raw]
    assert Counter(q.template for q in queries) == Counter({t: 100 for t in QUEST_TEMPLATES})
    for q, r in zip(queries, raw, strict=True):
        assert q.docs == frozenset(r["docs"])
        assert list(q.atoms or ()) == r["metadata"]["attrs"]
        assert q.domain is None


def test_metadata_atoms_win_over_marks(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    rec = {
        "query": "x",
        "docs": ["d1", "d1", "d2"],
        "original_query": "<mark>A</mark> that are not <mark>B</mark>",
        "metadata": {"template": "_ that are not _", "atoms": ["a-atom", "b-atom"]},
    }
    bare = {"query": "y", "docs": ["d3"]}
    path.write_text(json.dumps(rec) + "\n\n" + json.dumps(bare) + "\n", encoding="utf-8")
    first, second = load_quest_queries(path)
    assert first.atoms == ("a-atom", "b-atom")
    assert first.docs == frozenset({"d1", "d2"})
    assert (second.qid, second.atoms, second.template, second.original_query) == (
        "1",
        None,
        None,
        None,
    )


def test_marked_atoms() -> None:
    assert marked_atoms("<mark>A b</mark> or <mark> C </mark>") == ["A b", "C"]
    assert marked_atoms(None) == [] and marked_atoms("no marks") == []


GOOD = json.dumps({"query": "q", "docs": ["a"]})


@pytest.mark.parametrize(
    ("bad_line", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"docs": ["a"]}), "missing required field 'query'"),
        (json.dumps({"query": "q"}), "missing required field 'docs'"),
        (json.dumps({"query": 3, "docs": ["a"]}), "'query' must be a string"),
        (json.dumps({"query": "q", "docs": "a"}), "'docs' must be a list of strings"),
        (json.dumps({"query": "q", "docs": ["a", 1]}), "'docs' must be a list of strings"),
        (json.dumps({"query": "q", "docs": [], "metadata": [1]}), "'metadata' must be"),
        (
            json.dumps({"query": "q", "docs": [], "metadata": {"template": 7}}),
            "'metadata.template' must be",
        ),
        (
            json.dumps({"query": "q", "docs": [], "metadata": {"atoms": "A"}}),
            "'metadata.atoms' must be a list",
        ),
        (json.dumps({"query": "q", "docs": [], "original_query": 1}), "'original_query'"),
        (json.dumps({"id": [1], "query": "q", "docs": []}), "'id' must be"),
    ],
)
def test_broken_query_lines_name_file_and_line(tmp_path: Path, bad_line: str, fragment: str):
    path = tmp_path / "broken.jsonl"
    # the blank line must still count: the bad line is line 4 of the file
    path.write_text(f"{GOOD}\n\n{GOOD}\n{bad_line}\n{GOOD}\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError) as info:
        load_quest_queries(path)
    assert str(info.value).startswith(f"{path}:4: ")
    assert fragment in str(info.value)
    assert info.value.line == 4


def test_duplicate_ids_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    rec = {"id": 5, "query": "q", "docs": ["a"]}
    path.write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"dup\.jsonl:2: .*already used on line 1"):
        load_quest_queries(path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="holds no queries"):
        load_quest_queries(empty)


def test_load_atom_sets(tmp_path: Path) -> None:
    path = tmp_path / "atoms.jsonl"
    rows = [
        {"atom": "A", "domain": "films", "docs": ["d1", "d2"]},
        {"atom": "B", "domain": "films", "docs": []},
        {"atom": "A", "domain": "films", "docs": ["d2", "d1"]},  # same set again: fine
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert load_atom_sets(path) == {"A": {"d1", "d2"}, "B": set()}


@pytest.mark.parametrize(
    ("bad_line", "fragment"),
    [
        ("nope", "not valid JSON"),
        (json.dumps({"docs": []}), "missing required field 'atom'"),
        (json.dumps({"atom": "C"}), "missing required field 'docs'"),
        (json.dumps({"atom": 1, "docs": []}), "'atom' must be a string"),
        (json.dumps({"atom": "C", "docs": [None]}), "'docs' must be a list of strings"),
        (json.dumps({"atom": "A", "docs": ["other"]}), "already given a different gold set"),
    ],
)
def test_broken_atom_lines(tmp_path: Path, bad_line: str, fragment: str) -> None:
    path = tmp_path / "atoms.jsonl"
    path.write_text(json.dumps({"atom": "A", "docs": ["d1"]}) + "\n" + bad_line + "\n")
    with pytest.raises(CorpusFormatError) as info:
        load_atom_sets(path)
    assert str(info.value).startswith(f"{path}:2: ") and fragment in str(info.value)
