"""The LlamaIndex adapter reproduces the engine's results and plugs into LlamaIndex."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document as LIDocument  # noqa: E402
from llama_index.core.schema import MetadataMode, QueryBundle, TextNode  # noqa: E402

from logic_rag.integrations.llama_index import (  # noqa: E402
    LogicEmbedding,
    LogicLlamaIndexRetriever,
    nodes_to_documents,
)

LOGIC_QUERY = "fruits grown in California that are not berries"


def as_rows(nodes):
    return [
        (n.node.node_id, round(float(n.score), 5), n.node.metadata.get("constraints", {}))
        for n in nodes
    ]


def engine_rows(hits):
    return [(h.id, round(float(h.score), 5), dict(h.constraints)) for h in hits]


def test_retrieve_matches_engine(engine, queries):
    retriever = LogicLlamaIndexRetriever(engine, similarity_top_k=3)
    for q in queries:
        nodes = retriever.retrieve(q)
        assert as_rows(nodes) == engine_rows(engine.search(q, 3))
        assert [n.node.text for n in nodes] == [h.text for h in engine.search(q, 3)]


def test_metadata_explains_logic_and_stays_out_of_prompts(engine):
    nodes = LogicLlamaIndexRetriever(engine, similarity_top_k=4).retrieve(LOGIC_QUERY)
    meta = nodes[0].node.metadata
    assert meta["rank"] == 1 and meta["n"] in range(10) and meta["title"]
    assert any(c.startswith("NOT ") for c in meta["constraints"]), meta["constraints"]
    assert set(meta["constraint_scores"]) == set(meta["constraints"])
    assert "NOT" in meta["decomposition"]["query"]
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        shown = nodes[0].node.get_content(metadata_mode=mode)
        assert meta["title"] in shown and nodes[0].node.text in shown
        assert "constraint" not in shown and "decomposition" not in shown
    # Results are copies: editing them leaves the engine's documents alone.
    meta["n"] = -1
    assert all(d.metadata["n"] != -1 for d in engine.documents)


def test_strategy_is_passed_through(engine):
    vanilla = LogicLlamaIndexRetriever(engine, similarity_top_k=10, strategy="vanilla").retrieve(
        LOGIC_QUERY
    )
    assert as_rows(vanilla) == engine_rows(engine.search(LOGIC_QUERY, 10, strategy="vanilla"))
    assert "constraints" not in vanilla[0].node.metadata


def test_bad_arguments(engine):
    with pytest.raises(TypeError, match="search"):
        LogicLlamaIndexRetriever(object())
    with pytest.raises(ValueError, match="k must be"):
        LogicLlamaIndexRetriever(engine, similarity_top_k=0)
    with pytest.raises(ValueError, match="empty"):
        LogicLlamaIndexRetriever(engine).retrieve(QueryBundle("   "))
    with pytest.raises(TypeError, match="TextNode"):
        nodes_to_documents(["plain string"])


def test_from_documents_keeps_ids_titles_metadata(minilm, texts):
    docs = [
        LIDocument(text=t, id_=f"doc-{i}", metadata={"title": t.split()[0], "i": i})
        for i, t in enumerate(texts)
    ]
    retriever = LogicLlamaIndexRetriever.from_documents(docs, model=minilm, similarity_top_k=2)
    top = retriever.retrieve("oily fish")[0]
    assert top.node.node_id == "doc-7" and top.node.metadata["i"] == 7
    assert top.node.metadata["title"] == "Salmon"
    with pytest.raises(ValueError, match="unique"):
        LogicLlamaIndexRetriever.from_documents(
            [TextNode(id_="x", text="a"), TextNode(id_="x", text="b")], model=minilm
        )


def test_from_index_round_trip(engine, minilm, tmp_path, queries):
    engine.save(tmp_path / "idx")
    reopened = LogicLlamaIndexRetriever.from_index(
        tmp_path / "idx", model=minilm, similarity_top_k=3
    )
    for q in queries:
        assert as_rows(reopened.retrieve(q)) == engine_rows(engine.search(q, 3))


def test_embedding_matches_encoder(minilm):
    import numpy as np

    emb = LogicEmbedding(minilm)
    assert emb.model_name == "minilm"
    q = emb.get_query_embedding("citrus fruit")
    docs = emb.get_text_embedding_batch(["lemons", "tuna"])
    np.testing.assert_allclose(q, minilm.encode_queries(["citrus fruit"])[0], atol=1e-6)
    np.testing.assert_allclose(docs, minilm.encode_documents(["lemons", "tuna"]), atol=1e-6)
    aq = asyncio.run(emb.aget_query_embedding("citrus fruit"))
    np.testing.assert_allclose(aq, q, atol=1e-6)


def test_faiss_vector_store_index_and_query_engine(minilm, texts, engine):
    faiss = pytest.importorskip("faiss")
    pytest.importorskip("llama_index.vector_stores.faiss")
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.vector_stores.faiss import FaissVectorStore

    embed = LogicEmbedding(minilm)
    store = FaissVectorStore(faiss_index=faiss.IndexFlatIP(384))
    index = VectorStoreIndex(
        [TextNode(id_=f"d{i}", text=t) for i, t in enumerate(texts)],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=embed,
    )
    # Our embedding serves the FAISS index: its top hit is the engine's vanilla top hit.
    li_top = index.as_retriever(similarity_top_k=1).retrieve("tropical fruit")[0]
    assert li_top.node.node_id == engine.search("tropical fruit", 1, strategy="vanilla")[0].id

    retriever = LogicLlamaIndexRetriever.from_faiss_vector_store(
        index, model=minilm, similarity_top_k=2
    )
    assert len(retriever.engine) == len(texts)
    # MockLLM without max_tokens echoes its prompt, so the answer shows the context it got.
    qe = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = qe.query("Which fish is canned?")
    assert [n.node.node_id for n in response.source_nodes][0] == "d8"
    assert "Tuna is a large ocean fish often canned." in str(response)
    assert "constraint_scores" not in str(response)


def test_empty_docstore_is_refused(minilm):
    class Empty:
        class docstore:  # noqa: N801 - mimics the attribute
            docs: dict = {}

    with pytest.raises(ValueError, match="store_nodes_override"):
        LogicLlamaIndexRetriever.from_vector_store_index(Empty(), model=minilm)


async def test_200_concurrent_aretrieve_match_sequential(engine, queries):
    retriever = LogicLlamaIndexRetriever(engine, similarity_top_k=5)
    asked = [queries[i % len(queries)] for i in range(200)]
    expected = {q: as_rows(retriever.retrieve(q)) for q in queries}
    results = await asyncio.gather(*(retriever.aretrieve(q) for q in asked))
    assert [as_rows(r) for r in results] == [expected[q] for q in asked]


async def test_aretrieve_does_not_block_the_event_loop(engine):
    retriever = LogicLlamaIndexRetriever(engine, similarity_top_k=5)
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.gather(*(retriever.aretrieve(LOGIC_QUERY) for _ in range(20)))
    task.cancel()
    # Were encoding on the loop, the ticker would run about once per call.
    assert ticks > 100
