"""The WordNet 3.0 reader and the real-prose set built from it: full WordNet from the shared
data (``$LOGIC_RAG_DATA/wordnet/data.noun.gz``; skips without it)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.finetune.data import (
    WordNetMissingError,
    build_wordnet_set,
    default_wordnet_dir,
    load_quest_training_set,
    read_wordnet_nouns,
)
from logic_rag.query import atoms as query_atoms


@pytest.fixture(scope="module")
def nouns():
    folder = default_wordnet_dir()
    if not (folder / "data.noun.gz").is_file() and not (folder / "data.noun").is_file():
        pytest.skip(f"WordNet 3.0 not found in the shared data ({folder}); set LOGIC_RAG_DATA")
    return read_wordnet_nouns(folder)


@pytest.fixture(scope="module")
def wn_set(tmp_path_factory, nouns):
    out = tmp_path_factory.mktemp("wordnet")
    manifest = build_wordnet_set(out, max_docs=1200, seed=0)
    return out, manifest


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_reader_parses_the_real_file(nouns) -> None:
    assert len(nouns) == 82115  # noun synsets in WordNet 3.0
    dog = nouns["02084071"]
    assert dog.lemmas == ("dog", "domestic dog", "Canis familiaris")
    assert dog.lexfile == "noun.animal"
    assert set(dog.hypernyms) == {"02083346", "01317541"}  # canine, domestic animal
    assert dog.gloss.startswith("a member of the genus Canis")
    assert dog.doc_id == "dog.02084071" and dog.text.startswith("dog, domestic dog, Canis")
    # Instance hypernyms (@i) count: Mars (the planet) is an instance of a superior planet.
    mars = [s for s in nouns.values() if s.lemmas[0] == "Mars" and s.lexfile == "noun.object"]
    assert mars and all(s.hypernyms for s in mars)


def test_set_is_exact_and_split_by_atom(wn_set, nouns) -> None:
    out, manifest = wn_set
    docs = {r["title"]: r["text"] for r in _jsonl(out / "documents.jsonl")}
    assert 300 <= len(docs) <= 1200 == manifest["max_docs"]
    by_id = {s.doc_id: s for s in nouns.values()}
    atom_rows = _jsonl(out / "atoms.jsonl")
    assert atom_rows
    # Brute force: a document is in "Kinds of X" iff X is a proper ancestor of its synset.
    ancestors: dict[str, set[str]] = {}
    for doc in docs:
        seen, stack = set(), list(by_id[doc].hypernyms)
        while stack:
            up = stack.pop()
            if up not in seen:
                seen.add(up)
                stack.extend(nouns[up].hypernyms)
        ancestors[doc] = {nouns[o].doc_id for o in seen}
    split_of = {}
    for row in atom_rows:
        expected = {d for d in docs if row["synset"] in ancestors[d]}
        assert set(row["docs"]) == expected, row["atom"]
        assert 2 <= len(expected) <= 200
        split_of[row["atom"]] = row["split"]
    assert set(split_of.values()) == {"train", "val", "test"}
    for split in ("train", "val", "test"):
        rows = _jsonl(out / f"{split}.jsonl")
        for row in rows:
            assert set(row["metadata"]["atoms"]) <= {a for a, s in split_of.items() if s == split}
            assert set(row["docs"]) <= set(docs)
    train = load_quest_training_set(
        out / "train.jsonl", out / "documents.jsonl", atoms=out / "atoms.jsonl"
    )
    assert len(train) == manifest["counts"]["queries"]["train"] > 20
    for q in train.queries:
        assert all(split_of[a.text] == "train" for a in query_atoms(q.logical_query))
    assert any(q.distractors for q in train.queries)


def test_missing_wordnet_says_where_to_find_it(tmp_path) -> None:
    with pytest.raises(WordNetMissingError, match="LOGIC_RAG_DATA"):
        read_wordnet_nouns(tmp_path)


def test_default_is_the_shared_data(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LOGIC_RAG_DATA", str(tmp_path))
    assert default_wordnet_dir() == tmp_path / "wordnet"
    with pytest.raises(WordNetMissingError, match=str(tmp_path / "wordnet")):
        read_wordnet_nouns()


def test_reads_gzipped_data_and_a_file_path(tmp_path) -> None:
    line = "02084071 05 n 01 dog 0 001 @ 02083346 n 0000 | a member of the genus Canis\n"
    (tmp_path / "data.noun.gz").write_bytes(gzip.compress(("  header\n" + line).encode()))
    assert read_wordnet_nouns(tmp_path)["02084071"].lemmas == ("dog",)
    assert read_wordnet_nouns(tmp_path / "data.noun.gz")["02084071"].gloss.startswith("a member")


def test_malformed_line_names_file_and_line(tmp_path) -> None:
    good = "02084071 05 n 01 dog 0 001 @ 02083346 n 0000 | a member of the genus Canis\n"
    (tmp_path / "data.noun").write_text("  licence header\n" + good + "0001 05 n zz dog\n")
    with pytest.raises(CorpusFormatError, match=r"data\.noun:3"):
        read_wordnet_nouns(tmp_path)
    (tmp_path / "data.noun").write_text(good)
    parsed = read_wordnet_nouns(tmp_path)
    assert parsed["02084071"].hypernyms == ("02083346",)
