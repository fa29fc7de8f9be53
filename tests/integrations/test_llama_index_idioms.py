"""LlamaIndex idioms: to_dict / from_dict, instrumentation events, keep_retrieval_score,
ref_doc_id on retrieved nodes, the deprecated names and the default model."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document as LIDocument  # noqa: E402
from llama_index.core.instrumentation import get_dispatcher  # noqa: E402
from llama_index.core.instrumentation.event_handlers import BaseEventHandler  # noqa: E402
from llama_index.core.instrumentation.events.rerank import (  # noqa: E402
    ReRankEndEvent,
    ReRankStartEvent,
)
from llama_index.core.schema import (  # noqa: E402
    MetadataMode,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    TextNode,
)

from logic_rag.integrations.llama_index import (  # noqa: E402
    LogicEmbedding,
    LogicLlamaIndexReranker,
    LogicLlamaIndexRetriever,
)
from logic_rag.strategy_settings import (  # noqa: E402
    EvidenceSettings,
    RerankSettings,
    VerifySettings,
)

from .conftest import TEXTS  # noqa: E402

NEGATION = "fruits grown in California that are not berries"


@pytest.fixture(scope="module")
def nodes():
    return [
        NodeWithScore(node=TextNode(text=t, id_=f"n{i}", metadata={"n": i}), score=1.0 - i / 10)
        for i, t in enumerate(TEXTS)
    ]


def _ranked(out):
    return [(n.node.node_id, round(float(n.score), 5)) for n in out]


# ---------------------------------------------------------------------- to_dict / from_dict
def test_to_dict_from_dict_round_trips_every_field(minilm, nodes):
    reranker = LogicLlamaIndexReranker(
        minilm,
        strategy="rerank",
        settings=RerankSettings(
            positive_prior=0.25, truth_weight=0.9, evidence=EvidenceSettings(threshold_rank=3)
        ),
        top_n=4,
        decomposer="rules",
        passages=False,
        cache_size=7,
        calibration="corpus",
        keep_retrieval_score=True,
    )
    data = reranker.to_dict()
    fields = set(LogicLlamaIndexReranker.model_fields) - {"callback_manager"}
    assert fields <= set(data) and data["class_name"] == "LogicLlamaIndexReranker"
    written = data["settings"]
    assert written["type"] == "logic_rag.strategy_settings.RerankSettings"
    assert written["init_parameters"]["positive_prior"] == 0.25 and data["cache_size"] == 7
    assert written["init_parameters"]["evidence"]["init_parameters"]["threshold_rank"] == 3
    again = LogicLlamaIndexReranker.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data
    assert again.reranker.settings == reranker.reranker.settings
    assert again.reranker.calibration == "corpus" and not again.reranker.passages
    assert again.reranker.cache.capacity == 7
    assert again.reranker.pipeline() == reranker.reranker.pipeline()
    from_json = LogicLlamaIndexReranker.from_json(reranker.to_json())
    q = NEGATION
    want = _ranked(reranker.postprocess_nodes(nodes, query_str=q))
    assert _ranked(again.postprocess_nodes(nodes, query_str=q)) == want
    assert _ranked(from_json.postprocess_nodes(nodes, query_str=q)) == want


def test_specs_round_trip_and_objects_must_be_passed_again(minilm):
    from logic_rag.verifiers.base import Checked, Verifier

    spec = LogicLlamaIndexReranker(
        minilm, settings=VerifySettings(verifier="llm:qwen2.5-1.5b"), decomposer="auto"
    )
    data = spec.to_dict()
    verifier = data["settings"]["init_parameters"]["verifier"]
    assert verifier == "llm:qwen2.5-1.5b" and data["decomposer"] == "auto"
    assert LogicLlamaIndexReranker.from_dict(data).to_dict() == data  # nothing loads yet

    @dataclass(frozen=True)
    class Always(Verifier):
        name: str = "always"

        def check(self, requests, ctx):
            return [Checked(np.ones((len(r.atoms), len(r.rows)))) for r in requests]

    custom = LogicLlamaIndexReranker(minilm, settings=VerifySettings(verifier=Always()))
    data = custom.to_dict()
    assert data["settings"]["init_parameters"]["verifier"]["type"].endswith(".Always")
    with pytest.raises(ValueError, match="Always.*pass it again"):
        LogicLlamaIndexReranker.from_dict(data)
    again = LogicLlamaIndexReranker.from_dict(data, settings=VerifySettings(verifier=Always()))
    assert Always() in again.reranker.verifiers


# ---------------------------------------------------------------------- instrumentation
class _Collect(BaseEventHandler):
    events: list = []

    @classmethod
    def class_name(cls) -> str:
        return "CollectRerankEvents"

    def handle(self, event, **kwargs) -> None:
        if isinstance(event, ReRankStartEvent | ReRankEndEvent):
            self.events.append(event)


@pytest.fixture
def captured():
    handler = _Collect(events=[])
    root = get_dispatcher()
    root.add_event_handler(handler)
    yield handler.events
    root.event_handlers.remove(handler)


def test_rerank_events_reach_an_event_handler(minilm, nodes, captured):
    reranker = LogicLlamaIndexReranker(minilm, top_n=3)
    out = reranker.postprocess_nodes(nodes, query_bundle=QueryBundle(NEGATION))
    start, end = captured
    assert isinstance(start, ReRankStartEvent) and isinstance(end, ReRankEndEvent)
    assert start.query.query_str == NEGATION and start.top_n == 3
    assert start.model_name == "minilm" and len(start.nodes) == len(nodes)
    assert [n.node.node_id for n in end.nodes] == [n.node.node_id for n in out]
    assert start.span_id and start.span_id == end.span_id  # inside postprocess_nodes' span
    captured.clear()
    asynced = asyncio.run(reranker.apostprocess_nodes(nodes, query_str=NEGATION))
    assert [type(e) for e in captured] == [ReRankStartEvent, ReRankEndEvent]
    assert _ranked(captured[1].nodes) == _ranked(asynced) == _ranked(out)
    captured.clear()
    assert reranker.postprocess_nodes([], query_str=NEGATION) == []
    assert [type(e) for e in captured] == [ReRankStartEvent, ReRankEndEvent]
    assert captured[1].nodes == [] and captured[0].top_n == 3


# ---------------------------------------------------------------------- result fields
def test_keep_retrieval_score(minilm, nodes):
    kept = LogicLlamaIndexReranker(minilm, top_n=10, keep_retrieval_score=True)
    for hit in kept.postprocess_nodes(nodes, query_str=NEGATION):
        given = nodes[int(hit.node.node_id[1:])]
        assert hit.node.metadata["retrieval_score"] == given.score
        assert "retrieval_score" not in hit.node.get_content(metadata_mode=MetadataMode.LLM)
    plain = LogicLlamaIndexReranker(minilm, top_n=2).postprocess_nodes(nodes, query_str=NEGATION)
    assert all("retrieval_score" not in n.node.metadata for n in plain)
    assert nodes[0].node.metadata == {"n": 0}  # inputs untouched


def test_retrieved_nodes_carry_ref_doc_id(minilm, engine, tmp_path):
    from llama_index.core.node_parser import SentenceSplitter

    docs = [LIDocument(text=t, id_=f"doc-{i}") for i, t in enumerate(TEXTS)]
    whole = LogicLlamaIndexRetriever.from_documents(docs, model=minilm, similarity_top_k=3)
    for hit in whole.retrieve("oily fish"):
        assert hit.node.ref_doc_id == hit.node.node_id
        assert hit.node.relationships[NodeRelationship.SOURCE].node_id == hit.node.node_id
    long = [LIDocument(text=" ".join([t] * 12), id_=f"long-{i}") for i, t in enumerate(TEXTS)]
    split = LogicLlamaIndexRetriever.from_documents(
        long,
        model=minilm,
        similarity_top_k=4,
        node_parser=SentenceSplitter(chunk_size=40, chunk_overlap=0, tokenizer=str.split),
    )
    assert len(split.engine) > len(long)  # the documents were split into nodes
    for hit in split.retrieve("oily fish"):
        assert hit.node.ref_doc_id.startswith("long-") and hit.node.ref_doc_id != hit.node.node_id
        assert "ref_doc_id" not in hit.node.metadata
        source = long[int(hit.node.ref_doc_id.split("-")[1])]
        assert hit.node.text in source.text
    engine.save(tmp_path / "idx")
    reopened = LogicLlamaIndexRetriever.from_index(tmp_path / "idx", model=minilm)
    top = reopened.retrieve("oily fish")[0]
    assert top.node.ref_doc_id == top.node.node_id == "d7"


# ---------------------------------------------------------------------- names and models
def test_old_names_are_deprecated_aliases():
    import logic_rag.integrations.llama_index as adapter

    with pytest.warns(DeprecationWarning, match="LogicLlamaIndexRetriever"):
        assert adapter.LogicRetriever is LogicLlamaIndexRetriever
    with pytest.warns(DeprecationWarning, match="LogicLlamaIndexReranker"):
        from logic_rag.integrations.llama_index import LogicReranker
    assert LogicReranker is LogicLlamaIndexReranker
    with pytest.raises(AttributeError):
        adapter.NoSuchThing  # noqa: B018


def test_every_default_model_is_default_dense_model(monkeypatch):
    from logic_rag.models import default_dense_model

    monkeypatch.setenv("LOGIC_RAG_DEFAULT_MODEL", "minilm")
    assert default_dense_model() == "minilm"
    assert LogicEmbedding().encoder.name == "minilm"
    assert LogicLlamaIndexReranker().model == "minilm"
    retriever = LogicLlamaIndexRetriever.from_documents(
        [LIDocument(text=t) for t in TEXTS[:3]], passages=False
    )
    assert retriever.engine.dense.encoder.name == "minilm"
