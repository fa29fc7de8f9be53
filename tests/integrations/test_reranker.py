"""The LlamaIndex and LangChain rerankers, and the framework-free core they share."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from .conftest import TEXTS

NEGATION = "fruits grown in California that are not berries"
STRAWBERRY = TEXTS[4]


class _Keyword:
    """A verifier double: P = 0.99 when the atom's last word is in the page, else 0.01.

    Records the atoms it saw and the threads it ran on."""

    def __new__(cls):
        from logic_rag.verifiers.base import PairVerifier
        from logic_rag.verifiers.cache import PairCache

        class Keyword(PairVerifier):
            def __init__(self) -> None:
                object.__setattr__(self, "cache", PairCache(max_entries=0))
                object.__setattr__(self, "atoms", set())
                object.__setattr__(self, "threads", set())

            def fingerprint(self) -> str:
                return "keyword"

            def score_texts(self, pairs):
                self.atoms.update(a for a, _ in pairs)
                self.threads.add(threading.get_ident())
                hit = [a.split()[-1].lower() in t.lower() for a, t in pairs]
                return np.where(hit, 4.6, -4.6)

        return Keyword()


@pytest.fixture(scope="module")
def core(minilm):
    from logic_rag.integrations._rerank import CandidateReranker

    return CandidateReranker(minilm)


# ---------------------------------------------------------------------- the core
def test_negated_member_moves_down_and_is_flagged(core):
    ranked = core.rerank(NEGATION, TEXTS)
    assert sorted(r.position for r in ranked) == list(range(len(TEXTS)))
    berry = next(r for r in ranked if r.position == 4)
    assert berry.hit.constraints["NOT berries"] is False
    assert berry.hit.constraint_scores["NOT berries"] < 0.5
    # Evidence calibrated on ten candidates is relative: only the clear case is ✗, none
    # of the others is called a berry (the rest is ✓ or ?).
    assert [r.position for r in ranked if r.hit.constraints["NOT berries"] is False] == [4]
    # Input order puts the berry first; the logic moves it below a California non-berry.
    first = core.rerank(NEGATION, [STRAWBERRY, *TEXTS[:4], *TEXTS[5:]])
    assert first[0].position != 0
    assert first[0].hit.logic["query"] == "fruits grown in California NOT berries"
    scores = [r.hit.score for r in ranked]
    assert scores == sorted(scores, reverse=True)


def test_one_candidate_is_uninformative_but_well_defined(core):
    (only,) = core.rerank(NEGATION, [STRAWBERRY])
    assert only.position == 0
    assert only.hit.constraint_scores == {"fruits grown in California": 0.5, "NOT berries": 0.5}
    assert np.isfinite(only.hit.score)


def test_two_candidates_split_at_the_midpoint(core):
    avocado = "Avocados are creamy green fruits grown in California."
    ranked = core.rerank(NEGATION, [STRAWBERRY, avocado])
    assert [r.position for r in ranked] == [1, 0]
    by_pos = {r.position: r.hit.constraint_scores for r in ranked}
    # For every atom one candidate lies above p = 0.5 and the other below it.
    for atom in ("fruits grown in California", "NOT berries"):
        assert (by_pos[0][atom] - 0.5) * (by_pos[1][atom] - 0.5) < 0
    assert by_pos[0]["NOT berries"] < 0.5 < by_pos[1]["NOT berries"]


def test_candidate_thresholds_for_one_two_and_many():
    from logic_rag.verifiers.embedding import CandidateEmbeddingVerifier, EmbeddingVerifier

    verifier, corpus = CandidateEmbeddingVerifier(), EmbeddingVerifier()
    one = np.array([[0.7]])
    assert verifier.thresholds(one, 1).tolist() == [0.7]
    two = np.array([[0.8, 0.4]])
    assert verifier.thresholds(two, 2) == pytest.approx([0.6])
    assert corpus.thresholds(two, 2).tolist() == [0.8]  # the corpus rule: unchanged
    many = np.sort(np.random.default_rng(0).random((3, 100)), axis=1)[:, ::-1]
    # r = min(threshold_rank=20, 100 // 4): halfway between the 20th and 21st neighbour.
    assert verifier.thresholds(many, 100) == pytest.approx((many[:, 19] + many[:, 20]) / 2)
    assert corpus.thresholds(many, 100) == pytest.approx(many[:, 19])
    # Padding (fewer neighbours than asked for) falls back to the rank itself.
    padded = np.array([[0.9, 0.5, -np.inf, -np.inf]])
    assert verifier.thresholds(padded, 4) == pytest.approx([0.7])
    assert verifier.thresholds(np.array([[0.9, -np.inf]]), 4).tolist() == [0.9]


def test_many_candidates_put_at_most_a_quarter_above_half(core):
    texts = [f"{t} Item {i}." for i in range(4) for t in TEXTS]  # 40 candidates
    ranked = core.rerank("citrus fruits", texts)
    above = sum(r.hit.constraint_scores["citrus fruits"] > 0.5 for r in ranked)
    assert above == 40 // 4


def test_query_without_logic_keeps_the_best_input_document(core, minilm):
    from logic_rag.corpus import Document
    from logic_rag.retriever import DenseRetriever

    dense = DenseRetriever.build(
        [Document(id=str(i), text=t) for i, t in enumerate(TEXTS)], model=minilm
    )
    for query in ("citrus fruits", "fish", "red fruit", "nuts"):
        hits = dense.search(query, 6)
        ranked = core.rerank(query, [h.text for h in hits], scores=[h.score for h in hits])
        assert not ranked[0].hit.constraints or len(ranked[0].hit.constraints) == 1
        assert 0 in [r.position for r in ranked[:2]], query


def test_second_verifier_checks_positive_atoms_and_decides(minilm):
    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.strategy_settings import VerifySettings

    keyword = _Keyword()
    CandidateReranker(minilm, settings=VerifySettings(verifier=keyword)).rerank(NEGATION, TEXTS)
    assert keyword.atoms == {"fruits grown in California"}
    everything = _Keyword()
    strict = CandidateReranker(
        minilm,
        settings=VerifySettings(verifier=everything, verifier_atoms="all", truth_weight=100.0),
    )
    ranked = strict.rerank("fruits that are not berries", TEXTS, top_n=4)
    assert everything.atoms == {"fruits", "berries"}
    assert len(ranked) == 4 and 4 not in [r.position for r in ranked]
    assert all("fruits" in TEXTS[r.position] for r in ranked)


@pytest.mark.parametrize("strategy", ["verify", "orthogonal"])
def test_a_call_builds_no_faiss_index(minilm, monkeypatch, strategy):
    """The candidates' vectors are searched in memory (orthogonal searches them)."""
    from logic_rag.index import faiss_index
    from logic_rag.integrations._rerank import CandidateReranker

    reranker = CandidateReranker(minilm, strategy=strategy)
    want = [r.position for r in reranker.rerank(NEGATION, TEXTS)]

    def refuse(*_args, **_kwargs):
        raise AssertionError("the reranker built a FAISS index")

    monkeypatch.setattr(faiss_index.DenseIndex, "__init__", refuse)
    monkeypatch.setattr(faiss_index, "_faiss", refuse)
    assert [r.position for r in reranker.rerank(NEGATION, TEXTS)] == want
    assert sorted(want) == list(range(len(TEXTS)))


def test_options_and_errors(core, minilm):
    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.strategy_settings import VerifySettings

    assert core.rerank(NEGATION, []) == []
    assert len(core.rerank(NEGATION, TEXTS, top_n=2)) == 2
    assert len(core.rerank(NEGATION, TEXTS[:3], top_n=50)) == 3
    with pytest.raises(ValueError, match="empty"):
        core.rerank("  ", TEXTS)
    with pytest.raises(ValueError, match="at least 1"):
        core.rerank(NEGATION, TEXTS, top_n=0)
    with pytest.raises(ValueError, match="2 scores for 10"):
        core.rerank(NEGATION, TEXTS, scores=[1.0, 2.0])
    with pytest.raises(ValueError, match="unknown verifier"):
        CandidateReranker(minilm, settings=VerifySettings(verifier="bogus"))
    with pytest.raises(ValueError, match="needs a SPLADE index.*verify"):
        CandidateReranker(minilm, strategy="splade")
    with pytest.raises(ValueError, match="unknown strategy"):
        CandidateReranker(minilm, strategy="bogus")
    with pytest.raises(ValueError, match="calibration"):
        CandidateReranker(minilm, calibration="bogus")
    assert "CandidateEmbeddingVerifier" in core.pipeline().describe()
    (only,) = CandidateReranker(minilm).verifiers
    assert only.name == "embedding"
    with pytest.raises(TypeError, match="verifier"):
        CandidateReranker(minilm, verifier="llm:qwen2.5-1.5b")  # settings name it
    with pytest.raises(ValueError, match="asks no LLM"):
        CandidateReranker(minilm, strategy="rerank", llm=object())


def test_given_candidates_scores():
    from logic_rag.candidates.given import GivenCandidates

    assert GivenCandidates()._scores(3).tolist() == [0.0, -1.0, -2.0]
    assert GivenCandidates((0.2, None, 0.9))._scores(3).tolist() == [0.0, -1.0, -2.0]
    assert GivenCandidates((0.2, 0.1, 0.9))._scores(3).tolist() == [0.2, 0.1, 0.9]
    with pytest.raises(ValueError, match="2 scores for 3"):
        GivenCandidates((0.2, 0.1))._scores(3)


# ---------------------------------------------------------------------- LlamaIndex
@pytest.fixture(scope="module")
def li_nodes():
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import NodeWithScore, TextNode

    return [
        NodeWithScore(node=TextNode(text=t, id_=f"n{i}", metadata={"n": i}), score=1.0 - i / 10)
        for i, t in enumerate(TEXTS)
    ]


def test_llama_index_reranker(minilm, li_nodes):
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import MetadataMode

    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker as LogicReranker

    reranker = LogicReranker(minilm, top_n=3)
    assert isinstance(reranker, BaseNodePostprocessor)
    out = reranker.postprocess_nodes(li_nodes, query_str=NEGATION)
    assert len(out) == 3 and "n4" not in [n.node.node_id for n in out[:1]]
    assert [n.score for n in out] == sorted((n.score for n in out), reverse=True)
    for hit in out:
        meta = hit.node.metadata
        assert meta["n"] == int(hit.node.node_id[1:])
        assert set(meta["constraints"]) == {"fruits grown in California", "NOT berries"}
        assert set(meta["constraint_scores"]) == set(meta["constraints"])
        assert meta["decomposition"]["query"] == "fruits grown in California NOT berries"
        assert "constraints" not in hit.node.get_content(metadata_mode=MetadataMode.LLM)
    # The inputs are not modified.
    assert li_nodes[0].node.metadata == {"n": 0} and li_nodes[0].score == 1.0
    full = reranker.postprocess_nodes(li_nodes, query_str=NEGATION)
    assert len(full) == 3
    every = LogicReranker(minilm).postprocess_nodes(li_nodes, query_str=NEGATION)
    assert len(every) == len(TEXTS)
    assert every[-1].node.node_id != "n4" or every[-1].node.metadata["constraints"]


def test_llama_index_reranker_edges_and_async(minilm, li_nodes):
    from llama_index.core.schema import QueryBundle

    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker as LogicReranker
    from logic_rag.strategy_settings import VerifySettings

    keyword = _Keyword()
    reranker = LogicReranker(minilm, settings=VerifySettings(verifier=keyword), top_n=4)
    written = reranker.settings["init_parameters"]["verifier"]
    assert written["type"].endswith(".Keyword")  # named, never built from a file
    assert keyword in reranker.reranker.verifiers
    with pytest.raises(ValueError, match="needs the query"):
        reranker.postprocess_nodes(li_nodes)
    assert reranker.postprocess_nodes([], query_str=NEGATION) == []
    sync = reranker.postprocess_nodes(li_nodes, query_bundle=QueryBundle(NEGATION))
    main = threading.get_ident()
    keyword.threads.clear()
    keyword.cache.clear()
    asynced = asyncio.run(reranker.apostprocess_nodes(li_nodes, query_str=NEGATION))
    assert [n.node.node_id for n in asynced] == [n.node.node_id for n in sync]
    assert [n.score for n in asynced] == pytest.approx([n.score for n in sync])
    assert keyword.threads and main not in keyword.threads  # worked off the event loop
    with pytest.raises(ValueError, match="needs the query"):
        asyncio.run(reranker.apostprocess_nodes(li_nodes))


def test_llama_index_reranker_in_a_query_engine(minilm, li_nodes):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import TextNode

    from logic_rag.integrations.llama_index import LogicEmbedding
    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker as LogicReranker

    index = VectorStoreIndex(
        [TextNode(text=t, id_=f"n{i}") for i, t in enumerate(TEXTS)],
        embed_model=LogicEmbedding(minilm),
    )
    engine = index.as_query_engine(
        similarity_top_k=6, node_postprocessors=[LogicReranker(minilm, top_n=2)], llm=MockLLM()
    )
    response = engine.query(NEGATION)
    assert len(response.source_nodes) == 2
    assert all("constraints" in n.node.metadata for n in response.source_nodes)


# ---------------------------------------------------------------------- LangChain
@pytest.fixture(scope="module")
def lc_docs():
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    return [Document(page_content=t, metadata={"n": i}, id=f"d{i}") for i, t in enumerate(TEXTS)]


def test_langchain_reranker(minilm, lc_docs):
    from langchain_core.documents.compressor import BaseDocumentCompressor

    from logic_rag.integrations.langchain import LogicLangChainReranker as LogicReranker

    reranker = LogicReranker(minilm, top_n=3)
    assert isinstance(reranker, BaseDocumentCompressor)
    out = reranker.compress_documents(lc_docs, NEGATION)
    assert len(out) == 3 and out[0].id != "d4"
    scores = [d.metadata["relevance_score"] for d in out]
    assert scores == sorted(scores, reverse=True)
    for doc in out:
        assert doc.metadata["n"] == int(doc.id[1:])
        assert set(doc.metadata["constraints"]) == {"fruits grown in California", "NOT berries"}
        assert doc.metadata["decomposition"]["source"] == "rules"
    assert lc_docs[0].metadata == {"n": 0}
    assert reranker.compress_documents([], NEGATION) == []
    with pytest.raises(ValueError, match="empty"):
        reranker.compress_documents(lc_docs, "")


def test_langchain_reranker_async(minilm, lc_docs):
    from logic_rag.integrations.langchain import LogicLangChainReranker as LogicReranker
    from logic_rag.strategy_settings import VerifySettings

    keyword = _Keyword()
    reranker = LogicReranker(minilm, settings=VerifySettings(verifier=keyword))
    sync = reranker.compress_documents(lc_docs, NEGATION)
    keyword.threads.clear()
    asynced = asyncio.run(reranker.acompress_documents(lc_docs, NEGATION))
    assert [d.id for d in asynced] == [d.id for d in sync]
    assert threading.get_ident() not in keyword.threads and keyword.threads
    assert asyncio.run(reranker.acompress_documents([], NEGATION)) == []
