"""The quality cascade in both rerankers, over a store's top 100 real QUEST pages.

A FAISS store of 300 real QUEST-attr novel pages returns its top 100 for a negated query;
the LlamaIndex postprocessor and the LangChain compressor re-rank them with ``quality``
(SmolLM2-135M on llama.cpp as the costly verifier, to keep the default suite fast): the
same ranking from both, the LLM asked about fewer pairs than checking every one.
"""

from __future__ import annotations

import json

import pytest

QUERY = "novels that are not science fiction novels"


@pytest.fixture(scope="module")
def top100(shared_data, minilm):
    from logic_rag import Document
    from logic_rag.retriever import Retriever

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
    store = Retriever.build(pages, model=minilm)
    return store.search(QUERY, k=100)


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    from logic_rag.generators.llamacpp import llamacpp_available
    from logic_rag.strategies import LogicConfig

    if not llamacpp_available():
        pytest.skip("llama-cpp-python is not installed; run `make setup`")
    folder = tmp_path_factory.mktemp("cascade")
    return LogicConfig(
        verifier="llm:llamacpp:smollm2-135m",
        verifier_atoms="all",
        quality_sample=24,
        quality_thresholds=str(folder / "cascade.json"),
    )


def test_both_rerankers_run_the_quality_cascade_over_100_candidates(top100, config, minilm):
    from langchain_core.documents import Document as LCDocument
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.integrations.langchain import LogicLangChainReranker
    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker
    from logic_rag.verifiers.cascade import forget_thresholds

    assert len(top100) == 100
    forget_thresholds()
    core = CandidateReranker(minilm, strategy="quality", config=config)
    texts, scores = [h.text for h in top100], [h.score for h in top100]
    first = core.rerank(QUERY, texts, scores=scores)  # fits the cascade on this call
    assert sorted(r.position for r in first) == list(range(100))
    assert first[0].hit.logic["cascade"]["fit_calls"] >= 1
    ranked = core.rerank(QUERY, texts, scores=scores)  # reuses the saved sample
    cascade = ranked[0].hit.logic["cascade"]
    assert cascade["fit_calls"] == 0
    assert cascade["all_pairs_calls"] == 2 * 40  # quality_top=40 candidates x 2 atoms
    assert cascade["uncut_pairs_calls"] == 2 * 100
    assert 0 < cascade["expensive_calls"] < cascade["all_pairs_calls"]
    order = [top100[r.position].id for r in ranked]

    nodes = [NodeWithScore(node=TextNode(text=h.text, id_=h.id), score=h.score) for h in top100]
    li = LogicLlamaIndexReranker(minilm, strategy="quality", config=config, top_n=None)
    out = li.postprocess_nodes(nodes, QueryBundle(QUERY))
    assert [n.node.node_id for n in out][:20] == order[:20]

    docs = [LCDocument(page_content=h.text, metadata={"id": h.id}) for h in top100]
    lc = LogicLangChainReranker(minilm, strategy="quality", config=config, top_n=20)
    kept = lc.compress_documents(docs, QUERY)
    assert [d.metadata["id"] for d in kept] == order[:20]
    forget_thresholds()
