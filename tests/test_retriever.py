"""The dense engine end to end on real MS MARCO passages with the packaged MiniLM."""

from __future__ import annotations

import json

import pytest

from logic_rag.encoders.dense import DenseEncoder
from logic_rag.errors import IndexCorruptError, IndexMismatchError
from logic_rag.index.bm25 import BM25Index
from logic_rag.retriever import DenseRetriever


@pytest.fixture(scope="module")
def built(minilm, msmarco_small):
    docs, queries, qrels = msmarco_small
    return DenseRetriever.build(docs, model=minilm), queries, qrels


def test_relevant_passages_rank_high(built):
    retriever, queries, qrels = built
    found = 0
    for qid, text in queries.items():
        top = {h.id for h in retriever.search(text, k=10)}
        found += bool(top & {d for d, rel in qrels[qid].items() if rel > 0})
    assert found >= 4  # 5 judged queries; MiniLM finds a relevant passage for nearly all


def test_hits_are_ranked_and_serialisable(built):
    retriever, queries, _ = built
    hits = retriever.search(next(iter(queries.values())), k=5)
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))
    row = json.loads(json.dumps(hits[0].to_json()))
    assert set(row) >= {"id", "title", "score", "text"}


@pytest.mark.parametrize("query", ["", "   \n\t"])
def test_empty_query_is_a_clear_value_error(built, query):
    retriever, _, _ = built
    with pytest.raises(ValueError, match="empty"):
        retriever.search(query)


def test_batch_equals_single(built):
    retriever, queries, _ = built
    texts = list(queries.values())
    batch = retriever.search_batch(texts, k=5)
    for text, hits in zip(texts, batch, strict=True):
        single = retriever.search(text, k=5)
        assert [h.id for h in hits] == [h.id for h in single]


def test_save_load_round_trip(built, tmp_path):
    retriever, queries, _ = built
    retriever.save(tmp_path / "idx")
    loaded = DenseRetriever.load(tmp_path / "idx", model=retriever.encoder)
    text = next(iter(queries.values()))
    assert [h.id for h in loaded.search(text, 5)] == [h.id for h in retriever.search(text, 5)]


def test_corrupt_faiss_file_is_detected(built, tmp_path):
    retriever, _, _ = built
    out = retriever.save(tmp_path / "idx")
    data = bytearray((out / "index.faiss").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (out / "index.faiss").write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="index.faiss does not match the checksum"):
        DenseRetriever.load(out, model=retriever.encoder)


def test_truncated_documents_file_is_detected(built, tmp_path):
    retriever, _, _ = built
    out = retriever.save(tmp_path / "idx")
    lines = (out / "documents.jsonl").read_text().splitlines()
    (out / "documents.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(IndexCorruptError):
        DenseRetriever.load(out, model=retriever.encoder)


def test_other_model_weights_are_refused(built, tmp_path):
    retriever, _, _ = built
    out = retriever.save(tmp_path / "idx")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["model"]["weights_sha256"] = "0" * 64
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexMismatchError, match="built with model 'minilm'"):
        DenseRetriever.load(out, model=retriever.encoder)


def test_dimension_mismatch_is_refused(built, tmp_path):
    retriever, _, _ = built
    out = retriever.save(tmp_path / "idx")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["dimension"] = 768
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexMismatchError, match="768-d"):
        DenseRetriever.load(out, model=retriever.encoder)


def test_dense_encoder_refuses_a_sparse_model():
    with pytest.raises(ValueError, match="sparse model"):
        DenseEncoder("splade-tiny")


def test_bm25_baseline(msmarco_small):
    docs, queries, qrels = msmarco_small
    bm25 = BM25Index([d.content for d in docs])
    qid, text = next(iter(queries.items()))
    scores, ids = bm25.search(text, 10)
    assert scores.shape == (1, 10)
    assert all(scores[0][i] >= scores[0][i + 1] for i in range(9))
    with pytest.raises(ValueError, match="empty"):
        bm25.search("", 10)


@pytest.mark.parametrize("where", ["logic_rag", "logic_rag.retriever"])
def test_the_old_name_retriever_warns_and_is_the_same_class(where):
    """``Retriever`` was renamed ``DenseRetriever``; the old name lives one release."""
    import importlib

    module = importlib.import_module(where)
    with pytest.warns(
        DeprecationWarning, match=rf"{where}\.Retriever is deprecated.*DenseRetriever"
    ):
        old = module.Retriever
    assert old is DenseRetriever
    assert "Retriever" not in getattr(module, "__all__", ())
    with pytest.warns(DeprecationWarning):  # not cached: every use is told
        assert module.Retriever is DenseRetriever


def test_the_library_does_not_use_the_old_name():
    """No module of ours names ``Retriever`` (it would warn about our own use)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found = []
    for folder in ("logic_rag", "integrations", "finetune", "evals", "benchmarks"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
                if isinstance(node, ast.Name):
                    names = [node.id]
                elif isinstance(node, ast.Attribute):
                    names = [node.attr]
                if "Retriever" in names:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found
