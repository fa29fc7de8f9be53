"""Default corpora: ELI5 answer pool (chunking, own-answer exclusion), shipped docs, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.corpus import Document
from logic_rag.evals.rag.datasets import RagExample, load_rag_dataset
from logic_rag.evals.rag.pool import (
    NoDefaultCorpusError,
    chunk_text,
    default_corpus,
    describe_corpus,
    excluded_for,
    split_sentences,
)


def _example(qid: str, question: str, answers: tuple[str, ...]) -> RagExample:
    return RagExample(id=qid, question=question, answers=answers, metadata={"dataset": "eli5"})


def test_split_sentences() -> None:
    text = 'It works. "Really?" Yes!\nNew line 3.5 mm long'
    assert split_sentences(text) == ["It works.", '"Really?"', "Yes!", "New line 3.5 mm long"]


def test_chunk_text_packs_sentences_greedily() -> None:
    text = "a b c. d e f g. h i j k l m n. o"
    # 3 + 4 > 4 starts a new chunk; the 7-word sentence is cut at 4 words and its
    # remainder shares a chunk with the next sentence
    assert chunk_text(text, 4) == ["a b c.", "d e f g.", "h i j k", "l m n. o"]
    assert chunk_text("", 4) == []
    with pytest.raises(ValueError):
        chunk_text("x", 0)


_words = st.lists(st.text(alphabet="abcxyz.!?\"'", min_size=1, max_size=6), min_size=0, max_size=80)


@settings(max_examples=150, deadline=None)
@given(
    words=_words,
    seps=st.lists(st.sampled_from([" ", "\n", "  ", " \n "]), min_size=80, max_size=80),
    size=st.integers(1, 12),
)
def test_chunk_text_loses_no_word_and_respects_size(
    words: list[str], seps: list[str], size: int
) -> None:
    text = "".join(w + s for w, s in zip(words, seps, strict=False))
    chunks = chunk_text(text, size)
    assert [w for c in chunks for w in c.split()] == text.split()
    assert all(1 <= len(c.split()) <= size for c in chunks)


def test_eli5_pool_records_source_and_excludes_own_answers() -> None:
    source = [
        _example("q1", "Why is the sky blue?", ("Rayleigh scattering. " * 30, "Short one.")),
        _example("q2", "Why is grass green?", ("Chlorophyll.",)),
        _example("q3", "why is the SKY blue", ("Re-asked question answer.",)),
    ]
    docs = default_corpus("eli5", source[:1], source=source, chunk_words=20)
    assert len({d.id for d in docs}) == len(docs)
    by_source: dict[str, list[Document]] = {}
    for doc in docs:
        by_source.setdefault(doc.metadata["source_id"], []).append(doc)
        assert doc.id.startswith(f"{doc.metadata['source_id']}#a")
    assert len(by_source["q1"]) == 4  # 60 words in 20-word chunks + "Short one."
    # q1's own answers, and those of the re-asked q3, are excluded; q2's are not
    q1 = source[0]
    assert [excluded_for(q1, d) for d in docs] == [
        d.metadata["source_id"] in ("q1", "q3") for d in docs
    ]
    assert not any(excluded_for(source[1], d) for d in by_source["q1"])
    assert all(excluded_for(source[1], d) for d in by_source["q2"])


def test_eli5_pool_defaults_to_whole_source_file(tmp_path: Path) -> None:
    rows = [
        {
            "q_id": f"q{i}",
            "title": f"Question {i}?",
            "answers": {"a_id": ["x"], "text": [f"Answer {i}."]},
        }
        for i in range(5)
    ]
    path = tmp_path / "eli5.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    examples = load_rag_dataset("eli5", path, limit=2)
    docs = default_corpus("eli5", examples)
    assert [d.metadata["source_id"] for d in docs] == [f"q{i}" for i in range(5)]
    kept = [d for d in docs if not excluded_for(examples[0], d)]
    assert [d.text for d in kept] == ["Answer 1.", "Answer 2.", "Answer 3.", "Answer 4."]


def test_eli5_pool_on_real_file_never_returns_own_answers(shared_data: Path) -> None:
    examples = load_rag_dataset("eli5", limit=30)
    source = load_rag_dataset("eli5", limit=300)
    docs = default_corpus("eli5", examples, source=source)
    assert all(len(d.text.split()) <= 100 for d in docs)
    for ex in examples:
        own = [d for d in docs if excluded_for(ex, d)]
        assert own and all(d.metadata["source_id"] == ex.id for d in own)
        own_words = " ".join(d.text for d in own if d.metadata["source_id"] == ex.id).split()
        assert own_words == " ".join(ex.answers).split()


def test_shipped_documents_union(shared_data: Path) -> None:
    examples = load_rag_dataset("alce-qampari")
    docs = default_corpus("alce-qampari", examples)
    shipped = [d for ex in examples for d in ex.documents]
    assert {(d.title, d.text) for d in docs} == {(d.title, d.text) for d in shipped}
    assert len(docs) == len({(d.title, d.text) for d in shipped})  # duplicates indexed once
    assert not any(excluded_for(ex, d) for ex in examples for d in docs)
    sample = shared_data / "rag/asqa/asqa_sample3.json"
    asqa_examples = load_rag_dataset("asqa", sample, split="all")
    asqa = default_corpus("asqa", asqa_examples)
    assert [d.id for d in asqa] == [d.id for ex in asqa_examples for d in ex.documents]
    assert asqa[0].title.startswith("List of women's footballers")


def test_asqa_corpus_has_every_question_of_the_file(shared_data: Path) -> None:
    """Five evaluated questions retrieve from the text of all 500: the rest are distractors."""
    path = shared_data / "rag/asqa/asqa_dev500.jsonl"
    every = load_rag_dataset("asqa", path)
    first5 = every[:5]
    docs = default_corpus("asqa", first5)
    texts = {(d.title, d.text) for ex in every for d in ex.documents}
    assert {(d.title, d.text) for d in docs} == texts
    assert len(docs) == len(texts)  # a paragraph two questions quote is indexed once
    sizes = describe_corpus(first5, docs)
    own = {(d.title, d.text) for ex in first5 for d in ex.documents}
    assert sizes["gold_of_evaluated_questions"] == len(own)
    assert sizes["distractors"] == len(texts) - len(own) > 1000
    assert sizes["questions_without_gold"] == sum(1 for ex in first5 if not ex.documents)


def test_no_default_corpus_errors_ask_for_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIC_RAG_DATA", str(tmp_path))
    nq = [RagExample(id="1", question="q", answers=("a",))]
    with pytest.raises(NoDefaultCorpusError, match="--corpus"):
        default_corpus("nq", nq)
    quest_file = tmp_path / "queries.jsonl"
    quest_file.write_text(json.dumps({"query": "q", "docs": ["A"]}) + "\n", encoding="utf-8")
    quest = load_rag_dataset("quest", quest_file)
    with pytest.raises(NoDefaultCorpusError, match="documents.jsonl.*--corpus"):
        default_corpus("quest", quest)
    (tmp_path / "documents.jsonl").write_text(
        json.dumps({"title": "A", "text": "about A"}) + "\n", encoding="utf-8"
    )
    (doc,) = default_corpus("quest", quest)
    assert (doc.id, doc.text) == ("A", "about A")
    with pytest.raises(NoDefaultCorpusError, match="--corpus"):
        default_corpus("asqa", [RagExample(id="1", question="q", answers=("a",))])


def test_pool_limit_builds_the_eli5_pool_from_the_first_questions(tmp_path: Path) -> None:
    from logic_rag.evals.rag.runner import RagEvalConfig, _default_documents

    records = [
        {
            "q_id": f"q{i}",
            "title": f"Why does thing {i} happen?",
            "selftext": "",
            "category": "Engineering",
            "answers": {"a_id": [f"a{i}"], "text": [f"Because of reason {i}. It is so."]},
        }
        for i in range(5)
    ]
    path = tmp_path / "eli5.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    examples = load_rag_dataset("eli5", path, limit=2)

    def pooled(**extra) -> set[str]:
        config = RagEvalConfig(dataset="eli5", out=tmp_path / "o", data_path=str(path), **extra)
        return {d.metadata["answer_of"] for d in _default_documents(config, examples)}

    assert pooled() == {"q0", "q1", "q2", "q3", "q4"}
    assert pooled(pool_limit=3) == {"q0", "q1", "q2"}
    settings = RagEvalConfig(dataset="eli5", out="o", pool_limit=3).settings()
    assert settings["pool_limit"] == 3
    assert "pool_limit" not in RagEvalConfig(dataset="eli5", out="o").settings()
    with pytest.raises(ValueError, match="needs --dataset eli5"):
        RagEvalConfig(dataset="asqa", out="o", pool_limit=3)
    with pytest.raises(ValueError, match="and no --corpus"):
        RagEvalConfig(dataset="eli5", out="o", corpus="c.jsonl", pool_limit=3)
    with pytest.raises(ValueError, match="at least 1"):
        RagEvalConfig(dataset="eli5", out="o", pool_limit=0)
