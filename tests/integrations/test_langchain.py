"""The LangChain adapter reproduces the engine's results and works in LCEL chains."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from logic_rag.integrations.langchain import LogicEmbeddings, LogicLangChainRetriever  # noqa: E402

LOGIC_QUERY = "fruits grown in California that are not berries"


def as_rows(docs):
    return [(d.id, round(d.metadata["score"], 5), d.metadata.get("constraints", {})) for d in docs]


def engine_rows(hits):
    return [(h.id, round(float(h.score), 5), dict(h.constraints)) for h in hits]


def test_invoke_matches_engine_and_k_overrides(engine, queries):
    retriever = LogicLangChainRetriever(engine=engine)
    for q in queries:
        docs = retriever.invoke(q)
        assert as_rows(docs) == engine_rows(engine.search(q, 4))
        assert [d.page_content for d in docs] == [h.text for h in engine.search(q, 4)]
    assert len(retriever.invoke(LOGIC_QUERY, k=2)) == 2
    assert len(LogicLangChainRetriever(engine=engine, k=7).invoke(LOGIC_QUERY)) == 7


def test_metadata_explains_logic(engine):
    doc = LogicLangChainRetriever(engine=engine).invoke(LOGIC_QUERY)[0]
    assert doc.metadata["rank"] == 1 and doc.metadata["title"]
    assert any(c.startswith("NOT ") for c in doc.metadata["constraints"])
    assert doc.metadata["decomposition"]["source"]
    vanilla = LogicLangChainRetriever(engine=engine, strategy="vanilla").invoke(LOGIC_QUERY)
    assert as_rows(vanilla) == engine_rows(engine.search(LOGIC_QUERY, 4, strategy="vanilla"))


def test_validation(engine):
    with pytest.raises(ValidationError, match="search"):
        LogicLangChainRetriever(engine=object())
    with pytest.raises(ValidationError, match="k must be"):
        LogicLangChainRetriever(engine=engine, k=0)
    with pytest.raises(ValueError, match="k must be"):
        LogicLangChainRetriever(engine=engine).invoke("fish", k=-1)
    with pytest.raises(ValueError, match="empty"):
        LogicLangChainRetriever(engine=engine).invoke("  ")


def test_from_texts_metadatas_ids(minilm, texts):
    metadatas = [{"title": t.split()[0], "i": i} for i, t in enumerate(texts)]
    retriever = LogicLangChainRetriever.from_texts(
        texts, metadatas, ids=[f"t{i}" for i in range(len(texts))], model=minilm, k=1
    )
    (top,) = retriever.invoke("oily fish")
    assert (top.id, top.metadata["i"], top.metadata["title"]) == ("t7", 7, "Salmon")
    unnamed = LogicLangChainRetriever.from_texts(texts[:3], model=minilm).invoke("sour", k=1)[0]
    assert unnamed.id == "2"
    with pytest.raises(ValueError, match="metadatas"):
        LogicLangChainRetriever.from_texts(texts, [{}], model=minilm)
    with pytest.raises(TypeError, match="one string"):
        LogicLangChainRetriever.from_texts("one text", model=minilm)


def test_from_documents_and_from_index(engine, minilm, texts, tmp_path, queries):
    docs = [LCDocument(page_content=t, id=f"x{i}") for i, t in enumerate(texts)]
    retriever = LogicLangChainRetriever.from_documents(docs, model=minilm, k=2)
    assert retriever.invoke("tropical fruit")[0].id == "x3"
    engine.save(tmp_path / "idx")
    reopened = LogicLangChainRetriever.from_index(tmp_path / "idx", model=minilm, k=3)
    for q in queries:
        assert as_rows(reopened.invoke(q)) == engine_rows(engine.search(q, 3))


def test_lcel_chain_passes_retrieved_text_to_the_llm(engine):
    def format_docs(docs):
        return "\n".join(d.page_content for d in docs)

    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    retriever = LogicLangChainRetriever(engine=engine, k=2)
    chain = (
        {"context": retriever | format_docs, "question": lambda q: q}
        | prompt
        | ParrotFakeChatModel()  # echoes the prompt it was given
        | StrOutputParser()
    )
    answer = chain.invoke("Which fish is canned?")
    top = engine.search("Which fish is canned?", 2)
    assert top[0].text in answer and top[1].text in answer
    assert "Question: Which fish is canned?" in answer
    simple = retriever | format_docs
    assert simple.invoke("citrus") == format_docs(retriever.invoke("citrus"))


def test_embeddings_match_encoder(minilm):
    import numpy as np

    emb = LogicEmbeddings(minilm)
    np.testing.assert_allclose(
        emb.embed_query("citrus"), minilm.encode_queries(["citrus"])[0], atol=1e-6
    )
    np.testing.assert_allclose(
        emb.embed_documents(["a", "b"]), minilm.encode_documents(["a", "b"]), atol=1e-6
    )
    assert emb.embed_documents([]) == []
    assert asyncio.run(emb.aembed_query("citrus")) == emb.embed_query("citrus")


async def test_200_concurrent_ainvoke_match_sequential(engine, queries):
    retriever = LogicLangChainRetriever(engine=engine, k=5)
    asked = [queries[i % len(queries)] for i in range(200)]
    expected = {q: as_rows(retriever.invoke(q)) for q in queries}
    results = await asyncio.gather(*(retriever.ainvoke(q) for q in asked))
    assert [as_rows(r) for r in results] == [expected[q] for q in asked]
