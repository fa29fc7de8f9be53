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
from logic_rag.strategies import LogicConfig  # noqa: E402
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
    assert data["kwargs"]["settings"]["tnorm"] == "godel" and data["kwargs"]["top_n"] is None
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


def test_an_older_dump_with_a_logic_config_still_loads(minilm):
    from logic_rag.integrations._settings import config_to_dict

    data = dumpd(LogicLangChainReranker(minilm, strategy="setops"))
    del data["kwargs"]["settings"]
    data["kwargs"]["config"] = config_to_dict(LogicConfig(setops_query_weight=0.3))
    again = _load(json.dumps(data))  # (loads() is beta: its warnings are silenced)
    assert again.reranker.settings == SetopsSettings(cosine_weight=0.3)
    assert dumpd(again)["kwargs"]["settings"]["cosine_weight"] == 0.3


def test_loads_refuses_what_it_was_not_told_to_trust(minilm):
    text = dumps(LogicLangChainReranker(minilm))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            loads(text)  # neither the class nor the namespace is allowed


def test_an_object_verifier_must_be_passed_again(minilm):
    from logic_rag.verifiers.llm import LLMVerifier

    odd = LLMVerifier(generator="qwen2.5-1.5b", max_chars=400)  # not a plain spec
    data = dumpd(LogicLangChainReranker(minilm, verifier=odd))
    assert data["kwargs"]["settings"]["verifier"] == "<object LLMVerifier>"
    with pytest.raises(ValueError, match="LLMVerifier.*pass it again"):
        _load(json.dumps(data))
    plain = dumpd(LogicLangChainReranker(minilm, verifier=LLMVerifier(generator="qwen2.5-1.5b")))
    assert plain["kwargs"]["settings"]["verifier"] == "llm:qwen2.5-1.5b"


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
