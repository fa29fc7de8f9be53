"""LangChain idioms: the compressor's top_n default, dumpd / loads, the deprecated names,
the default model, and the langchain-milvus connection workaround."""

from __future__ import annotations

import json
import warnings

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from langchain_core.load import dumpd, dumps, loads  # noqa: E402

from logic_rag.integrations.langchain import (  # noqa: E402
    LogicEmbeddings,
    LogicLangChainReranker,
    LogicLangChainRetriever,
    langchain_milvus_class,
)
from logic_rag.strategy_settings import SetopsSettings  # noqa: E402

from .conftest import TEXTS  # noqa: E402

NEGATION = "fruits grown in California that are not berries"


def _load(text: str) -> LogicLangChainReranker:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loads() is marked beta
        return loads(text, allowed_objects=[LogicLangChainReranker], valid_namespaces=["logic_rag"])


@pytest.fixture(scope="module")
def docs():
    return [LCDocument(page_content=t, metadata={"n": i}, id=f"d{i}") for i, t in enumerate(TEXTS)]


def test_top_n_defaults_to_three_like_the_peers(minilm, docs):
    reranker = LogicLangChainReranker(minilm)
    assert reranker.top_n == 3
    assert len(reranker.compress_documents(docs, NEGATION)) == 3
    every = LogicLangChainReranker(minilm, top_n=None).compress_documents(docs, NEGATION)
    assert len(every) == len(docs)


def test_dumpd_loads_round_trip(minilm, docs):
    reranker = LogicLangChainReranker(
        minilm,
        strategy="setops",
        settings=SetopsSettings(tnorm="godel", cosine_weight=0.3),
        top_n=None,
        decomposer="rules",
        cache_size=5,
        calibration="corpus",
    )
    assert LogicLangChainReranker.is_lc_serializable()
    data = dumpd(reranker)
    assert data["id"] == ["logic_rag", "integrations", "langchain", "LogicLangChainReranker"]
    assert data["kwargs"]["settings"]["init_parameters"]["tnorm"] == "godel"
    assert data["kwargs"]["top_n"] is None
    assert "config" not in data["kwargs"]
    again = _load(json.dumps(data))
    assert isinstance(again, LogicLangChainReranker) and dumpd(again) == data
    assert again.reranker.pipeline() == reranker.reranker.pipeline()
    assert again.reranker.cache.capacity == 5
    want = [
        (d.id, d.metadata["relevance_score"]) for d in reranker.compress_documents(docs, NEGATION)
    ]
    got = [(d.id, d.metadata["relevance_score"]) for d in again.compress_documents(docs, NEGATION)]
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
    # The defaults round-trip too (top_n=3 is left out of kwargs and comes back).
    default = LogicLangChainReranker(minilm)
    assert dumpd(_load(dumps(default))) == dumpd(default)


def test_loads_refuses_what_it_was_not_told_to_trust(minilm):
    text = dumps(LogicLangChainReranker(minilm))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            loads(text)  # neither the class nor the namespace is allowed


def test_verifiers_are_written_by_the_one_rule(minilm):
    """A verifier a spec describes is its spec; another of the library's is its type and
    parameters (rebuilt equal); one of another package is named and must be passed again."""
    from logic_rag.strategy_settings import VerifySettings
    from logic_rag.verifiers.llm import LLMVerifier
    from tests.verifier_doubles import KeywordVerifier

    odd = LLMVerifier(generator="qwen2.5-1.5b", max_chars=400)  # not a plain spec
    data = dumpd(LogicLangChainReranker(minilm, settings=VerifySettings(verifier=odd)))
    written = data["kwargs"]["settings"]["init_parameters"]["verifier"]
    assert written["type"] == "logic_rag.verifiers.llm.LLMVerifier"
    assert _load(json.dumps(data)).reranker.settings.verifier == odd
    plain = LLMVerifier(generator="qwen2.5-1.5b")
    data = dumpd(LogicLangChainReranker(minilm, settings=VerifySettings(verifier=plain)))
    assert data["kwargs"]["settings"]["init_parameters"]["verifier"] == "llm:qwen2.5-1.5b"
    foreign = VerifySettings(verifier=KeywordVerifier())
    data = dumpd(LogicLangChainReranker(minilm, settings=foreign))
    with pytest.raises(ValueError, match="KeywordVerifier.*pass it again"):
        _load(json.dumps(data))


def test_old_names_are_deprecated_aliases():
    import logic_rag.integrations.langchain as adapter

    with pytest.warns(DeprecationWarning, match="LogicLangChainRetriever"):
        assert adapter.LogicRetriever is LogicLangChainRetriever
    with pytest.warns(DeprecationWarning, match="LogicLangChainReranker"):
        from logic_rag.integrations.langchain import LogicReranker
    assert LogicReranker is LogicLangChainReranker


def test_every_default_model_is_default_dense_model(monkeypatch):
    monkeypatch.setenv("LOGIC_RAG_DEFAULT_MODEL", "minilm")
    assert LogicEmbeddings().encoder.name == "minilm"
    assert LogicLangChainReranker().model == "minilm"
    retriever = LogicLangChainRetriever.from_texts(TEXTS[:3], passages=False)
    assert retriever.engine.dense.encoder.name == "minilm"


def test_langchain_milvus_class_works_on_milvus_lite(minilm, tmp_path):
    pytest.importorskip("langchain_milvus")
    pytest.importorskip("milvus_lite")
    milvus = langchain_milvus_class()
    assert milvus is langchain_milvus_class()  # one class per process
    store = milvus.from_documents(
        [LCDocument(page_content=t, metadata={"doc_id": f"d{i}"}) for i, t in enumerate(TEXTS)],
        embedding=LogicEmbeddings(minilm),
        collection_name="idioms",
        connection_args={"uri": str(tmp_path / "lc.db")},
        index_params={"index_type": "FLAT", "metric_type": "IP"},
        search_params={"metric_type": "IP"},
        drop_old=True,
        auto_id=True,
    )
    found = store.similarity_search("oily fish", k=2)
    assert found[0].metadata["doc_id"] == "d7"
    reranked = LogicLangChainReranker(minilm, top_n=2).compress_documents(
        store.similarity_search(NEGATION, k=6), NEGATION
    )
    assert len(reranked) == 2 and "Strawberries" not in reranked[0].page_content
