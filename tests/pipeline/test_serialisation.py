"""Pipelines as plain JSON: ``Pipeline.from_dict(p.to_dict())`` is an equal pipeline that
ranks identically, for every named strategy; only logic-rag types are rebuilt."""

from __future__ import annotations

import json

import pytest

from logic_rag.pipeline.stage import Pipeline, Stage
from logic_rag.strategies import STRATEGIES, pipeline_of
from logic_rag.strategy_settings import QualitySettings, VerifySettings

QUERY = "Italian crime films that are not 1970s films"


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_strategy_round_trips_through_plain_json(name):
    pipeline = pipeline_of(name)
    text = json.dumps(pipeline.to_dict(), allow_nan=False)  # plain JSON, nothing live
    again = Pipeline.from_dict(json.loads(text))
    assert again == pipeline
    assert again.describe() == pipeline.describe()


@pytest.mark.parametrize(
    "name", [n for n, s in STRATEGIES.items() if n not in ("quality", "llm-rerank")]
)
def test_a_rebuilt_pipeline_ranks_identically(small_logic_retriever, name):
    retriever = small_logic_retriever
    built = retriever.pipeline(name)
    rebuilt = Pipeline.from_dict(json.loads(json.dumps(built.to_dict())))
    want = retriever.search(QUERY, k=10, strategy=name)
    got = retriever.search(QUERY, k=10, strategy=rebuilt)
    assert [(h.id, h.score) for h in got] == [(h.id, h.score) for h in want]


def test_settings_survive_and_only_logic_rag_types_load():
    settings = QualitySettings(verifier="llm:qwen2.5-1.5b", max_calls=7, candidates=50)
    data = pipeline_of("quality", settings).to_dict()
    certified = next(s for s in data["stages"] if s["type"].endswith("CertifiedTopK"))
    assert certified["init_parameters"]["max_llm_calls"] == 7
    assert certified["init_parameters"]["expensive"]["init_parameters"]["generator"] == (
        "qwen2.5-1.5b"
    )
    with pytest.raises(ValueError, match="only logic_rag"):
        Stage.from_dict({"type": "os.system", "init_parameters": {}})
    with pytest.raises(ValueError, match="unknown component"):
        Stage.from_dict({"type": "logic_rag.pipeline.ranking.NoSuchStage"})


def test_a_live_object_in_a_field_says_to_use_a_spec():
    from logic_rag.verifiers.llm import LLMVerifier

    class Generator:
        name = "mine"

    stage = pipeline_of("verify", VerifySettings(verifier=LLMVerifier(generator=Generator())))
    with pytest.raises(TypeError, match="spec string"):
        stage.to_dict()


@pytest.mark.parametrize("name", ["quality", "llm-rerank"])
def test_the_llm_strategies_rebuilt_rank_identically(small_logic_retriever, name):
    """``quality`` and ``llm-rerank`` too, with the embedding verifier in the LLM's place
    (its spec travels in the JSON like an LLM's; the LLM itself is too slow for this suite)."""
    from logic_rag.strategy_settings import LLMRerankSettings, QualitySettings

    settings_type = QualitySettings if name == "quality" else LLMRerankSettings
    built = pipeline_of(name, settings_type(verifier="embedding"))
    data = json.loads(json.dumps(built.to_dict()))
    assert "embedding" in json.dumps(data)
    rebuilt = Pipeline.from_dict(data)
    assert rebuilt == built
    want = small_logic_retriever.search(QUERY, k=10, strategy=built)
    got = small_logic_retriever.search(QUERY, k=10, strategy=rebuilt)
    assert [(h.id, h.score) for h in got] == [(h.id, h.score) for h in want]
