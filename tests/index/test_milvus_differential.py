"""Milvus Lite against FAISS on one corpus: every dense strategy, and the sentence evidence.

The Milvus client computes the best-sentence evidence itself from the sentence vectors
it reads from the store's local copy, or by primary key (see logic_rag.index.milvus_local),
so it must equal the FAISS backend's: the same float32 product over the same rows, bit for
bit, whether the vectors come from the local copy, from Milvus or from the client cache,
and for stores written before the sentence offsets were stored (read from the ``doc``
field instead). Every test runs with both vector sources (``local``, ``milvus``).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from benchmarks.common import world_documents, world_queries  # noqa: E402
from logic_rag.errors import IndexCorruptError  # noqa: E402
from logic_rag.index import milvus_store  # noqa: E402
from logic_rag.index.faiss_index import DenseIndex  # noqa: E402
from logic_rag.index.milvus_local import CACHE_ENV, VECTORS_ENV  # noqa: E402
from logic_rag.index.milvus_store import MilvusStore  # noqa: E402
from logic_rag.index.passages import PassageVectors  # noqa: E402
from logic_rag.logic_retriever import LogicRetriever  # noqa: E402
from logic_rag.retriever import DenseRetriever  # noqa: E402
from logic_rag.strategies import DENSE_STRATEGIES  # noqa: E402
from tests.verifier_doubles import KeywordVerifier  # noqa: E402

N_DOCUMENTS = 120


@pytest.fixture(scope="module")
def faiss_side(minilm) -> LogicRetriever:
    return LogicRetriever.build(world_documents(N_DOCUMENTS), model=minilm)


@pytest.fixture(scope="module", params=["local", "milvus"])
def source(request) -> str:
    """Where the Milvus side reads the candidates' vectors: its local copy, or Milvus."""
    return request.param


@pytest.fixture(autouse=True)
def _vector_source(source, monkeypatch):
    monkeypatch.setenv(VECTORS_ENV, source)


@pytest.fixture(scope="module")
def milvus_side(faiss_side, source, tmp_path_factory) -> LogicRetriever:
    folder = tmp_path_factory.mktemp("milvus-diff")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(VECTORS_ENV, source)
        side = faiss_side.to_store(f"milvus://{folder}/diff.db", collection="diff")
    assert side.passages.source == source
    return side


def _engine(retriever: LogicRetriever, strategy: str) -> LogicRetriever:
    if strategy in ("quality", "llm-rerank"):  # the LLM is a test double (tests/verifiers: real)
        from logic_rag.strategies import STRATEGIES

        return retriever.with_settings(STRATEGIES[strategy].settings(verifier=KeywordVerifier()))
    return retriever


@pytest.mark.parametrize("strategy", DENSE_STRATEGIES)
def test_every_strategy_gives_faiss_top10(faiss_side, milvus_side, strategy):
    queries = world_queries(8)
    expected = _engine(faiss_side, strategy).search_batch(queries, 10, strategy=strategy)
    for attempt in ("cold", "cached"):
        if attempt == "cold":
            milvus_side.dense.index.store.cache.clear()
        got = _engine(milvus_side, strategy).search_batch(queries, 10, strategy=strategy)
        for want, hits in zip(expected, got, strict=True):
            assert [h.id for h in hits] == [h.id for h in want], (strategy, attempt)
            np.testing.assert_allclose(
                [h.score for h in hits], [h.score for h in want], atol=1e-5, err_msg=strategy
            )
            assert [h.constraints for h in hits] == [h.constraints for h in want]
            for a, b in zip(hits, want, strict=True):
                assert a.constraint_scores.keys() == b.constraint_scores.keys()
                np.testing.assert_allclose(
                    list(a.constraint_scores.values()),
                    list(b.constraint_scores.values()),
                    atol=1e-5,
                )


def _probe(dim: int, n_documents: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    queries = rng.standard_normal((5, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    # unsorted, repeated, and every document once
    docs = np.concatenate([[17, 3, 17, n_documents - 1, 0], rng.permutation(n_documents)])
    return queries, docs


def test_max_sim_is_faiss_bit_for_bit_cold_and_cached(faiss_side, milvus_side, source):
    store = milvus_side.dense.index.store
    queries, docs = _probe(faiss_side.dense.encoder.dimension, len(faiss_side))
    expected = faiss_side.passages.max_sim(queries, docs)
    rows = np.array([5, 1, 5])
    vectors = np.asarray(faiss_side.dense.index.vectors())[rows]
    store.cache.clear()
    gets = []
    original = store.client.get
    store.client.get = lambda *a, **k: gets.append(k) or original(*a, **k)
    try:
        np.testing.assert_array_equal(milvus_side.passages.max_sim(queries, docs), expected)
        np.testing.assert_array_equal(milvus_side.dense.index.fetch(rows), vectors)
        # the local copy is read even cold; else one get per table
        assert len(gets) == (0 if source == "local" else 2)
        gets.clear()
        np.testing.assert_array_equal(milvus_side.passages.max_sim(queries, docs), expected)
        np.testing.assert_array_equal(milvus_side.dense.index.fetch(rows), vectors)
        assert gets == []  # every vector came from the local copy or the cache
    finally:
        store.client.get = original
    assert milvus_side.passages.max_sim(queries, np.array([], dtype=np.int64)).shape == (5, 0)
    with pytest.raises(IndexError):
        milvus_side.passages.max_sim(queries, np.array([len(faiss_side)]))


def test_float32_sentences_and_no_cache(minilm, tmp_path, monkeypatch):
    """Sentence vectors that float16 would round are cached (and compared) as float32;
    with the cache off every call reads Milvus and still gives the same numbers."""
    monkeypatch.setenv(CACHE_ENV, "0")
    rng = np.random.default_rng(3)
    n, dim = 40, minilm.dimension
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 6, n))]).astype(np.int64)
    sentences = rng.standard_normal((offsets[-1], dim)).astype(np.float32)
    index = DenseIndex(dim)
    index.add(vectors)
    local = LogicRetriever(
        DenseRetriever(minilm, index, world_documents(n)),
        passages=PassageVectors(sentences, offsets),
    )
    milvus = local.to_store(f"milvus://{tmp_path}/f32.db", collection="f32")
    assert milvus.dense.index.store.cache.max_bytes == 0
    queries, docs = _probe(dim, n)
    for _ in range(2):
        np.testing.assert_array_equal(
            milvus.passages.max_sim(queries, docs), local.passages.max_sim(queries, docs)
        )
    assert len(milvus.dense.index.store.cache) == 0


def test_a_store_without_offsets_reads_them_once(faiss_side, tmp_path, monkeypatch, caplog):
    """Stores written before the counts were stored (here: too large to store) still work:
    the offsets are read from the ``doc`` field on first use, once, with a warning."""
    monkeypatch.setattr(milvus_store, "_MAX_COUNTS_PROPERTY", -1)
    milvus = faiss_side.to_store(f"milvus://{tmp_path}/old.db", collection="old")
    passages = milvus.passages
    assert passages._offsets is None
    queries, docs = _probe(faiss_side.dense.encoder.dimension, len(faiss_side))
    with caplog.at_level(logging.WARNING, logger="logic_rag.index.milvus_store"):
        got = passages.max_sim(queries, docs)
        passages.max_sim(queries, docs[:3])
    np.testing.assert_array_equal(got, faiss_side.passages.max_sim(queries, docs))
    np.testing.assert_array_equal(passages.offsets, faiss_side.passages.offsets)
    assert sum("stores no sentence offsets" in r.getMessage() for r in caplog.records) == 1


def test_saved_folder_reopens_with_its_stored_offsets(faiss_side, minilm, tmp_path):
    milvus = faiss_side.to_store(f"milvus://{tmp_path}/s.db", collection="saved")
    loaded = LogicRetriever.load(milvus.save(tmp_path / "idx"), model=minilm)
    np.testing.assert_array_equal(loaded.passages._offsets, faiss_side.passages.offsets)


def test_corrupt_stored_offsets_are_refused(faiss_side, tmp_path):
    milvus = faiss_side.to_store(f"milvus://{tmp_path}/bad.db", collection="bad")
    store = milvus.dense.index.store
    store.client.alter_collection_properties(
        store.location.sentences, properties={milvus_store._COUNTS_PROPERTY: "garbage"}
    )
    with pytest.raises(IndexCorruptError, match="rebuild"):
        MilvusStore(store.location).open({"build_id": store.stored["build_id"]})


def test_a_search_brings_back_no_vectors(milvus_side):
    """Milvus Lite 3 returns every field of each hit when none is named: the vectors of
    300 neighbours per atom would cross the connection for nothing."""
    client = milvus_side.dense.index.store.client
    results = []
    original = client.search
    client.search = lambda *a, **k: results.append(original(*a, **k)) or results[-1]
    try:
        milvus_side.dense.index.search(np.asarray(milvus_side.dense.index.vectors()[[0, 1]]), 5)
    finally:
        client.search = original
    hits = [hit for found in results for row in found for hit in row]
    assert len(hits) == 10 and all("vector" not in hit["entity"] for hit in hits)
