"""End to end on real QUEST pages: teacher scores from a real verifier, then a cross-encoder
trained on them with ``logic-rag finetune verifier --teacher``.

The default suite uses the embedding verifier (MiniLM) as the teacher; the slow suite uses
Qwen2.5-1.5B, whose verdicts must separate the six science fiction novels from the four
others before the cross-encoder learns from them.
"""

from __future__ import annotations

import json

import pytest

QUERIES = ["science fiction novels", "novels that are not science fiction novels"]


def _index_and_files(pages, minilm, tmp_path):
    from logic_rag import Document
    from logic_rag.logic_retriever import LogicRetriever

    docs = [Document(id=p["title"], title=p["title"], text=p["text"]) for p in pages]
    index = tmp_path / "index"
    LogicRetriever.build(docs, model=minilm).save(index)
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"query": q, "docs": []}) + "\n" for q in QUERIES))
    documents = tmp_path / "documents.jsonl"
    documents.write_text(
        "".join(json.dumps({"title": p["title"], "text": p["text"]}) + "\n" for p in pages)
    )
    return index, train, documents


def _teach_and_train(index, train, documents, verifier, tmp_path, queries=2):
    from logic_rag.finetune.recipes.cli import main as recipe_main
    from logic_rag.finetune.verifier.teacher import main as teacher_main
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

    teacher = tmp_path / "teacher.jsonl"
    argv = ["--index", str(index), "--train", str(train), "--verifier", verifier]
    assert teacher_main([*argv, "--out", str(teacher)]) == 0
    rows = [json.loads(line) for line in teacher.read_text().splitlines()]
    run = tmp_path / "run"
    argv = ["--docs", str(documents), "--teacher", str(teacher), "--teacher-ratio", "0"]
    assert recipe_main("verifier", [*argv, "--out", str(run), "--max-steps", "2"]) == 0
    info = json.loads((run / "model" / "logic_rag_training.json").read_text())
    assert info["examples"] == {"teacher": len(rows)}
    probs = CrossEncoderVerifier(model=str(run / "model")).verify_pairs(
        [(QUERIES[0], "A novel about a voyage to Mars in 2100.")]
    )
    assert 0.0 < float(probs[0]) < 1.0
    return rows


def test_embedding_teacher_trains_a_cross_encoder_on_real_pages(
    quest_novel_pages, minilm, tmp_path
):
    index, train, documents = _index_and_files(quest_novel_pages, minilm, tmp_path)
    rows = _teach_and_train(index, train, documents, "embedding", tmp_path)
    titles = {p["title"] for p in quest_novel_pages}
    # Both queries' atoms ("novels" and the negated "science fiction novels" too) against
    # every one of the ten pages (the candidate depth exceeds the corpus), each pair once.
    pairs = {(r["atom"], r["title"]) for r in rows}
    assert len(pairs) == len(rows)
    assert {a for a, _ in pairs} == {"science fiction novels", "novels"}
    assert pairs == {(a, t) for a in ("science fiction novels", "novels") for t in titles}
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)


@pytest.mark.slow
def test_qwen_teacher_separates_members_and_trains_a_cross_encoder(
    quest_novel_pages, minilm, qwen_1_5b, tmp_path
):
    index, train, documents = _index_and_files(quest_novel_pages, minilm, tmp_path)
    train.write_text(json.dumps({"query": QUERIES[0], "docs": []}) + "\n")
    rows = _teach_and_train(index, train, documents, f"llm:{qwen_1_5b}", tmp_path)
    member = {p["title"]: "science fiction" in p["text"].lower() for p in quest_novel_pages}
    score = {r["title"]: r["score"] for r in rows if r["atom"] == QUERIES[0]}
    assert set(score) == set(member)
    yes = [score[t] for t in member if member[t]]
    no = [score[t] for t in member if not member[t]]
    auc = sum((y > n) + 0.5 * (y == n) for y in yes for n in no) / (len(yes) * len(no))
    assert auc >= 0.75, (auc, score)
