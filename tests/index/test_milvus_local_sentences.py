"""The local copy of a Milvus Lite store's vectors (logic_rag.index.milvus_local.LocalCopy).

A Milvus Lite store keeps a memory-mapped copy of its document and sentence vectors
beside its file, and reads the candidates' vectors from it instead of Milvus. It must give
exactly what reads by primary key give (same vectors, same evidence, same top-10); a copy
that is missing or damaged falls back to reads by primary key with a warning
(``vector_source="auto"``) or is refused (``"local"``); writes are atomic and a rewrite
deletes the copies it replaces.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from benchmarks.common import world_documents, world_queries  # noqa: E402
from logic_rag.errors import StoreError  # noqa: E402
from logic_rag.index import milvus_local  # noqa: E402
from logic_rag.index.faiss_index import DenseIndex  # noqa: E402
from logic_rag.index.milvus_local import VECTORS_ENV, LocalCopy, vector_source  # noqa: E402
from logic_rag.index.milvus_store import MilvusStore, parse_store_uri  # noqa: E402
from logic_rag.index.passages import PassageVectors  # noqa: E402
from logic_rag.logic_retriever import LogicRetriever  # noqa: E402
from logic_rag.retriever import DenseRetriever  # noqa: E402

N_DOCUMENTS = 60
DIM = 24
LOG = "logic_rag.index.milvus_store"


def _tables(seed: int = 0, sentence_dtype=np.float16):
    rng = np.random.default_rng(seed)
    docs = rng.standard_normal((N_DOCUMENTS, DIM)).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 7, N_DOCUMENTS))]).astype(np.int64)
    sentences = rng.standard_normal((int(offsets[-1]), DIM)).astype(sentence_dtype)
    return docs, sentences, offsets


def _probe(seed: int = 1):
    rng = np.random.default_rng(seed)
    queries = rng.standard_normal((4, DIM)).astype(np.float32)
    docs = np.concatenate([[7, 3, 7, N_DOCUMENTS - 1, 0], rng.permutation(N_DOCUMENTS)])
    return queries, docs


def _written(tmp_path, name="c", **tables):
    docs, sentences, offsets = _tables(**tables)
    store = MilvusStore(parse_store_uri(f"milvus://{tmp_path}/s.db", name))
    stored = store.write(docs, (sentences, offsets), {"model": {}})
    return store, stored, (docs, sentences, offsets)


def _open(store: MilvusStore, source: str):
    return MilvusStore(store.location, vector_source=source).open({})


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_local_copy_reads_exactly_what_milvus_holds(tmp_path, dtype):
    store, stored, (docs, sentences, offsets) = _written(tmp_path, sentence_dtype=dtype)
    assert stored["local_copy"] == {"documents": "float32", "sentences": np.dtype(dtype).name}
    local_dense, local = _open(store, "auto")
    pk_dense, by_pk = _open(store, "milvus")
    assert (local.source, by_pk.source) == ("local", "milvus")
    queries, rows = _probe()
    reference = PassageVectors(sentences, offsets)  # what the FAISS backend computes
    got = local.max_sim(queries, rows)
    np.testing.assert_array_equal(got, by_pk.max_sim(queries, rows))
    np.testing.assert_array_equal(got, reference.max_sim(queries, rows))
    np.testing.assert_array_equal(local_dense.fetch(rows), pk_dense.fetch(rows))
    np.testing.assert_array_equal(local_dense.fetch(rows), docs[rows])
    np.testing.assert_array_equal(local_dense.vectors()[[2, 0]], docs[[2, 0]])


def test_int8_sentences_are_copied_decoded(tmp_path, minilm):
    """int8 sentence vectors go to Milvus decoded (float32); the copy holds the same."""
    rng = np.random.default_rng(5)
    n, dim = 30, minilm.dimension
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 5, n))]).astype(np.int64)
    sentences = rng.standard_normal((int(offsets[-1]), dim)).astype(np.float32)
    index = DenseIndex(dim)
    index.add(vectors)
    faiss = LogicRetriever(
        DenseRetriever(minilm, index, world_documents(n)),
        passages=PassageVectors.from_vectors(sentences, offsets, dtype="int8"),
    )
    milvus = faiss.to_store(f"milvus://{tmp_path}/i8.db", collection="i8")
    assert milvus.dense.index.store.stored["local_copy"]["sentences"] == "float32"
    assert milvus.passages.source == "local"
    queries = rng.standard_normal((3, dim)).astype(np.float32)
    docs = rng.permutation(n)
    np.testing.assert_array_equal(
        milvus.passages.max_sim(queries, docs), faiss.passages.max_sim(queries, docs)
    )


def test_same_top10_from_the_local_copy_and_by_primary_key(minilm, tmp_path, monkeypatch):
    faiss = LogicRetriever.build(world_documents(80), model=minilm)
    via_copy = faiss.to_store(f"milvus://{tmp_path}/t.db", collection="top")
    loaded = LogicRetriever.load(via_copy.save(tmp_path / "idx"), model=minilm)
    assert loaded.passages.source == "local"  # a saved folder reopens its store's copy
    monkeypatch.setenv(VECTORS_ENV, "milvus")
    index, passages = MilvusStore(via_copy.dense.index.store.location).open({})
    assert passages.source == "milvus"
    by_pk = LogicRetriever(DenseRetriever(minilm, index, faiss.documents), passages=passages)
    assert via_copy.passages.source == "local"
    queries = world_queries(6)
    for strategy in ("vanilla", "rerank", "setops", "orthogonal"):
        want = faiss.search_batch(queries, 10, strategy=strategy)
        for got in (via_copy, by_pk, loaded):
            for a, b in zip(got.search_batch(queries, 10, strategy=strategy), want, strict=True):
                assert [h.id for h in a] == [h.id for h in b], strategy
                np.testing.assert_allclose([h.score for h in a], [h.score for h in b], atol=1e-5)


def test_the_local_copy_sits_beside_the_store_under_its_build_id(tmp_path):
    store, stored, _ = _written(tmp_path)
    folder = tmp_path / "s.db.logic-rag"
    assert LocalCopy.folder_of(store.location.uri) == folder
    names = sorted(p.name for p in folder.iterdir())
    build = stored["build_id"]
    assert names == [f"c.{build}.documents.npy", f"c.{build}.sentences.npy"]  # no temp files


def test_a_rewrite_deletes_the_copy_it_replaces_and_keeps_other_collections(tmp_path):
    store, first, tables = _written(tmp_path)
    other = MilvusStore(parse_store_uri(f"milvus://{tmp_path}/s.db", "other"))
    other.write(tables[0], (tables[1], tables[2]), {"model": {}})
    second = store.write(tables[0], (tables[1], tables[2]), {"model": {}}, overwrite=True)
    names = {p.name for p in (tmp_path / "s.db.logic-rag").iterdir()}
    assert not any(first["build_id"] in n for n in names)
    assert sum(second["build_id"] in n for n in names) == 2
    assert sum(n.startswith("other.") for n in names) == 2
    assert _open(store, "local")[1].source == "local"


def test_a_failed_write_leaves_no_copy(tmp_path, monkeypatch):
    store = MilvusStore(parse_store_uri(f"milvus://{tmp_path}/s.db", "c"))
    docs, sentences, offsets = _tables()

    def fail(*_a, **_k):
        raise RuntimeError("rename failed")

    monkeypatch.setattr(store.client, "rename_collection", fail)
    with pytest.raises(RuntimeError, match="rename failed"):
        store.write(docs, (sentences, offsets), {"model": {}})
    assert list((tmp_path / "s.db.logic-rag").iterdir()) == []


@pytest.mark.parametrize("damage", ["missing", "truncated", "other shape"])
def test_a_missing_or_damaged_copy_falls_back_with_a_warning_or_is_refused(
    tmp_path, caplog, damage
):
    store, stored, (docs, sentences, offsets) = _written(tmp_path)
    path = LocalCopy(tmp_path / "s.db.logic-rag", "c", stored["build_id"]).path("sentences")
    if damage == "missing":
        path.unlink()
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:-100])
    else:
        np.save(path, sentences[:-1])
    with caplog.at_level(logging.WARNING, logger=LOG):
        dense, passages = _open(store, "auto")
    assert passages.source == "milvus" and dense.local_rows is None
    [record] = [r for r in caplog.records if "local copy" in r.getMessage()]
    assert str(path) in record.getMessage() and "primary key" in record.getMessage()
    queries, rows = _probe()
    np.testing.assert_array_equal(
        passages.max_sim(queries, rows), PassageVectors(sentences, offsets).max_sim(queries, rows)
    )
    with pytest.raises(StoreError, match="local copy .* cannot be used") as refused:
        _open(store, "local")
    assert str(path) in str(refused.value)


def test_no_copy_without_milvus_lite_or_when_reads_go_to_milvus(tmp_path, caplog):
    store = MilvusStore(parse_store_uri(f"milvus://{tmp_path}/s.db", "c"), vector_source="milvus")
    docs, sentences, offsets = _tables()
    stored = store.write(docs, (sentences, offsets), {"model": {}})
    assert "local_copy" not in stored
    assert not (tmp_path / "s.db.logic-rag").exists()
    with caplog.at_level(logging.WARNING, logger=LOG):
        assert _open(store, "auto")[1].source == "milvus"  # nothing to warn about
    assert not [r for r in caplog.records if r.name == LOG]
    with pytest.raises(StoreError, match="has no local copy"):
        _open(store, "local")


def test_vector_source_from_argument_environment_or_default(monkeypatch):
    monkeypatch.delenv(VECTORS_ENV, raising=False)
    assert vector_source() == "auto"
    monkeypatch.setenv(VECTORS_ENV, "milvus")
    assert vector_source() == "milvus"
    assert vector_source("local") == "local"
    assert MilvusStore(parse_store_uri("milvus://x.db", "c")).vector_source == "milvus"
    for bad in ("", "faiss"):
        with pytest.raises(ValueError, match="auto, local, milvus"):
            vector_source(bad if bad else " ")
    monkeypatch.setenv(VECTORS_ENV, "disk")
    with pytest.raises(ValueError, match=VECTORS_ENV):
        vector_source()


def test_copy_written_in_blocks_equals_the_whole(tmp_path):
    docs, sentences, _ = _tables()
    copy = LocalCopy(tmp_path, "c", "0" * 32)
    assert copy.write("sentences", sentences, batch=7) == "float16"
    mapped = copy.open("sentences", sentences.shape, "float16")
    np.testing.assert_array_equal(mapped, sentences)
    assert copy.write("documents", docs, batch=1000) == "float32"
    np.testing.assert_array_equal(copy.open("documents", docs.shape, "float32"), docs)
    with pytest.raises(ValueError, match="documents and sentences"):
        copy.path("offsets")
    assert milvus_local.LocalCopy.storage_dtype(np.zeros((1, 1), np.float64)) == np.float32
