"""Certified top-k verification in both rerankers, over a store's top 100 real QUEST pages.

A FAISS store of 300 real QUEST-attr novel pages returns its top 100 for a negated query;
the LlamaIndex postprocessor and the LangChain compressor re-rank them with ``quality``
(SmolLM2-135M on llama.cpp as the costly verifier, to keep the default suite fast) with
their ``top_n`` as the k to certify: the same top from both, the LLM asked about fewer
pairs than checking every one.
"""

from __future__ import annotations

import json

import pytest

QUERY = "novels that are not science fiction novels"


@pytest.fixture(scope="module")
def top100(shared_data, minilm):
    from logic_rag import Document
    from logic_rag.retriever import DenseRetriever

    path = shared_data / "quest" / "attr" / "documents.jsonl"
    if not path.is_file():
        pytest.skip(f"QUEST-attr pages not found at {path}")
    pages = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if "novel" in row["text"].lower():
                pages.append(Document(id=row["title"], title=row["title"], text=row["text"]))
            if len(pages) == 300:
                break
    store = DenseRetriever.build(pages, model=minilm)
    return store.search(QUERY, k=100)


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    from logic_rag.generators.llamacpp import llamacpp_available
    from logic_rag.strategy_settings import QualitySettings

    if not llamacpp_available():
        pytest.skip("llama-cpp-python is not installed; run `make setup`")
    return QualitySettings(verifier="llm:llamacpp:smollm2-135m", verifier_atoms="all", pool=40)


def test_both_rerankers_certify_their_top_n_over_100_candidates(top100, settings, minilm):
    from langchain_core.documents import Document as LCDocument
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.integrations.langchain import LogicLangChainReranker
    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker

    assert len(top100) == 100
    core = CandidateReranker(minilm, strategy="quality", settings=settings)
    texts, scores = [h.text for h in top100], [h.score for h in top100]
    ranked = core.rerank(QUERY, texts, scores=scores, top_n=5)
    cost = ranked[0].hit.logic["llm"]
    assert cost["k"] == 5 and cost["all_pairs_calls"] == 2 * 40  # the pool: 40 x 2 atoms
    assert 0 < cost["calls"] < cost["all_pairs_calls"]
    order = [top100[r.position].id for r in ranked]
    again = core.rerank(QUERY, texts, scores=scores, top_n=5)  # the LLM's answers are cached
    assert [top100[r.position].id for r in again] == order

    nodes = [NodeWithScore(node=TextNode(text=h.text, id_=h.id), score=h.score) for h in top100]
    li = LogicLlamaIndexReranker(minilm, strategy="quality", settings=settings, top_n=5)
    out = li.postprocess_nodes(nodes, QueryBundle(QUERY))
    assert [n.node.node_id for n in out] == order

    docs = [LCDocument(page_content=h.text, metadata={"id": h.id}) for h in top100]
    lc = LogicLangChainReranker(minilm, strategy="quality", settings=settings, top_n=5)
    kept = lc.compress_documents(docs, QUERY)
    assert [d.metadata["id"] for d in kept] == order
