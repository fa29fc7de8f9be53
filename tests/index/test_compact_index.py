"""Compact sentence vectors and approximate document indexes, end to end (MiniLM).

One float32 build of the small generated world; the other settings reuse its vectors (no
second encoding), so differences come from the storage or the index alone.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from logic_rag.errors import IndexCorruptError
from logic_rag.evals.quest import load_quest_queries
from logic_rag.index.passages import PassageVectors
from logic_rag.logic_retriever import LogicRetriever
from logic_rag.retriever import DenseRetriever


@pytest.fixture(scope="module")
def float32_world(small_world, minilm):
    from logic_rag.corpus import load_documents

    docs = load_documents(small_world / "documents.jsonl")
    return LogicRetriever.build(docs, model=minilm, sentence_dtype="float32")


@pytest.fixture(scope="module")
def queries(small_world):
    return [q.query for q in load_quest_queries(small_world / "test.jsonl")][:40]


def _with_passages(base: LogicRetriever, dtype: str) -> LogicRetriever:
    exact = base.passages
    passages = PassageVectors.from_vectors(exact.vectors, exact.offsets, dtype=dtype)
    return LogicRetriever(base.dense, passages=passages)


def _top(
    retriever: LogicRetriever, queries: list[str], k: int, strategy: str = "rerank"
) -> list[list[str]]:
    return [[h.id for h in hits] for hits in retriever.search_batch(queries, k, strategy=strategy)]


@pytest.mark.parametrize("dtype", ["float16", "int8"])
def test_compact_sentences_keep_the_default_strategys_top_10(float32_world, queries, dtype):
    truth = _top(float32_world, queries, 10)
    got = _top(_with_passages(float32_world, dtype), queries, 10)
    same_set = np.mean([set(a) == set(b) for a, b in zip(got, truth, strict=True)])
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, truth, strict=True)])
    assert overlap >= 0.99 and same_set >= 0.9, (overlap, same_set)


def test_int8_index_saves_checksums_and_maps_its_files(float32_world, queries, tmp_path, minilm):
    compact = _with_passages(float32_world, "int8")
    out = compact.save(tmp_path / "idx")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sentence_dtype"] == "int8"
    assert {"passages.npy", "passage_offsets.npy", "passage_scales.npy"} <= set(manifest["files"])
    loaded = LogicRetriever.load(out, model=minilm)
    assert isinstance(loaded.passages.vectors, np.memmap)
    assert isinstance(loaded.passages.scales, np.memmap)
    assert _top(loaded, queries[:10], 10) == _top(compact, queries[:10], 10)
    data = bytearray((out / "passage_scales.npy").read_bytes())
    data[-1] ^= 0x40
    (out / "passage_scales.npy").write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="passage_scales.npy"):
        LogicRetriever.load(out, model=minilm)


def test_an_index_without_sentence_dtype_loads_unchanged(float32_world, queries, tmp_path, minilm):
    """Indexes written before the option (no manifest entry, float32 or float16 vectors)."""
    out = float32_world.save(tmp_path / "old")
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["sentence_dtype"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    loaded = LogicRetriever.load(out, model=minilm)
    assert loaded.passages.dtype == "float32"
    assert _top(loaded, queries[:10], 10) == _top(float32_world, queries[:10], 10)


@pytest.mark.parametrize("kind", ["hnsw", "ivfpq"])
def test_approximate_document_index_returns_the_flat_top_10(
    float32_world, queries, kind, tmp_path, minilm
):
    """HNSW and IVF-PQ (with its exact float16 rescoring, saved and memory-mapped) find the
    flat index's top 10 for whole queries and for the default strategy."""
    dense = float32_world.dense
    approx = DenseRetriever.from_embeddings(
        dense.encoder, dense.index.vectors(), dense.documents, index=kind
    )
    built = LogicRetriever(approx, passages=float32_world.passages)
    loaded = LogicRetriever.load(built.save(tmp_path / kind), model=minilm)
    assert loaded.dense.index.kind == kind
    if kind == "ivfpq":
        assert isinstance(loaded.dense.index.vectors(), np.memmap)
    for strategy in ("vanilla", "rerank"):
        truth = _top(float32_world, queries, 10, strategy)
        for retriever in (built, loaded):
            got = _top(retriever, queries, 10, strategy)
            pairs = zip(got, truth, strict=True)
            recall = np.mean([len(set(a) & set(b)) / 10 for a, b in pairs])
            assert recall >= 0.97, (kind, strategy, recall)
