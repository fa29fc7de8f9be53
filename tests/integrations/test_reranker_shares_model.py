"""One loaded model serves embedding and reranking: both rerankers take our embedding
adapters (and a DenseEncoder) and use the encoder they already loaded."""

from __future__ import annotations

import pytest


def test_llama_index_reranker_takes_a_logic_embedding(minilm):
    from logic_rag.integrations.llama_index import LogicEmbedding, LogicLlamaIndexReranker

    embedding = LogicEmbedding(minilm)
    reranker = LogicLlamaIndexReranker(model=embedding, strategy="rerank")
    assert reranker._core.encoder is embedding.encoder
    assert reranker.to_dict()["model"] == embedding.encoder.name  # still serialisable


def test_langchain_reranker_takes_logic_embeddings(minilm):
    from logic_rag.integrations.langchain import LogicEmbeddings, LogicLangChainReranker

    embeddings = LogicEmbeddings(minilm)
    reranker = LogicLangChainReranker(model=embeddings, strategy="rerank")
    assert reranker._core.encoder is embeddings.encoder


def test_anything_else_is_a_clear_type_error():
    from logic_rag.integrations._engine import resolve_encoder

    with pytest.raises(TypeError, match="LogicEmbedding"):
        resolve_encoder(object())
