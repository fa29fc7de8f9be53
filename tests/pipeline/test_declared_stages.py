"""Stages declare the state fields they need and fill; a pipeline checks its order when it
is built (issue 50 item 3), and ``CertifiedTopK`` shares one ``Score`` with the ranking."""

from __future__ import annotations

import dataclasses
import json

import pytest

from logic_rag.candidates import DenseCandidates, GivenCandidates
from logic_rag.compose.logic import SoftLogic
from logic_rag.compose.score import Score
from logic_rag.pipeline.ranking import Backfill, Combine, Cutoff, TopK
from logic_rag.pipeline.stage import GIVEN, Pipeline, Stage
from logic_rag.pipeline.state import QueryState
from logic_rag.strategies import STRATEGIES, pipeline_of, pipeline_over_candidates
from logic_rag.strategy_settings import (
    LLMRerankSettings,
    LogicSettings,
    QualitySettings,
    VerifySettings,
)
from logic_rag.verifiers import EmbeddingVerifier, Verify
from logic_rag.verifiers.certified import CertifiedTopK
from logic_rag.verifiers.whole_query import WholeQueryTruth


def _verify() -> Verify:
    return Verify(EmbeddingVerifier())


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (
            lambda: DenseCandidates() >> SoftLogic() >> Combine.of(cosine=1.0, truth=0.5),
            r"SoftLogic \(stage 2\) needs 'probs', which no earlier stage fills: put a Verify",
        ),
        (
            lambda: DenseCandidates() >> TopK(),
            r"TopK \(stage 2\) needs 'score', which no earlier stage fills: put a Combine",
        ),
        (
            lambda: DenseCandidates() >> _verify() >> Combine.of(cosine=1.0, truth=0.5),
            r"Combine \(stage 3\) needs 'signals.truth', .* put a SoftLogic stage",
        ),
        (
            lambda: DenseCandidates() >> Verify(EmbeddingVerifier(), polarity="positive"),
            r"Verify \(stage 2\) needs 'probs'",
        ),
        (
            lambda: DenseCandidates() >> Combine.of(dense=1.0) >> Backfill(),
            r"Backfill \(stage 3\) needs 'ranked', .* put a TopK stage",
        ),
        (
            lambda: GivenCandidates(name="input") >> Combine.of(dense=1.0),
            r"needs 'signals.dense', .* a candidate source named 'dense'",
        ),
        (
            lambda: Pipeline([DenseCandidates(), SoftLogic(), _verify()]),
            r"SoftLogic \(stage 2\) needs 'probs', .* Verify \(stage 3\) fills it, but after",
        ),
        (
            lambda: DenseCandidates() >> _verify() >> Cutoff(5),
            r"Cutoff \(stage 3\) needs 'score'",
        ),
    ],
)
def test_a_wrong_order_fails_when_the_pipeline_is_built_naming_the_field(build, words):
    with pytest.raises(ValueError, match=words):
        build()


def test_a_part_that_starts_later_is_checked_once_it_follows_a_start():
    part = SoftLogic() >> WholeQueryTruth()  # what quality's whole_query puts after CertifiedTopK
    assert not part.starts_search
    assert part.needed() == {"probs", "signals.query_truth"}
    with pytest.raises(
        ValueError, match="WholeQueryTruth \\(stage 4\\) needs 'signals.query_truth'"
    ):
        DenseCandidates() >> _verify() >> part


def test_from_dict_runs_the_same_check():
    data = (DenseCandidates() >> _verify() >> SoftLogic()).to_dict()
    data["stages"] = [data["stages"][0], data["stages"][2], data["stages"][1]]
    with pytest.raises(ValueError, match="SoftLogic \\(stage 2\\) needs 'probs'"):
        Pipeline.from_dict(data)


def _variants():
    for name, strategy in STRATEGIES.items():
        yield name, strategy.settings()
    yield "verify", VerifySettings(verifier="embedding", verifier_top=5, verifier_weight=0.5)
    yield "quality", QualitySettings(whole_query=True, cheap="embedding", positive_prior=0.0)
    yield "quality", QualitySettings(pool=None, tnorm="godel", truth_weight=0.3)
    yield "llm-rerank", LLMRerankSettings(top=3)
    for name in ("rerank", "setops", "fusion", "quality"):
        logic = LogicSettings(exclude_violations=0.6)
        yield name, STRATEGIES[name].settings(logic=logic)


@pytest.mark.parametrize(("name", "settings"), list(_variants()))
def test_every_strategy_builds_round_trips_and_needs_nothing_from_outside(name, settings):
    pipeline = pipeline_of(name, settings)
    assert pipeline.starts_search and pipeline.needed() == frozenset()
    again = Pipeline.from_dict(json.loads(json.dumps(pipeline.to_dict())))
    assert again == pipeline and again.describe() == pipeline.describe()
    if not STRATEGIES[name].needs_sparse:
        over = pipeline_over_candidates(name, settings, GivenCandidates())
        assert over.starts_search and over.needed() == frozenset()
        assert Pipeline.from_dict(json.loads(json.dumps(over.to_dict()))) == over


def _stage_classes() -> list[type[Stage]]:
    import logic_rag.candidates
    import logic_rag.compose.logic
    import logic_rag.pipeline.exclusion
    import logic_rag.verifiers.cascade
    import logic_rag.verifiers.certified
    import logic_rag.verifiers.whole_query  # noqa: F401 - every stage class is defined

    seen, todo = [], [Stage]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("logic_rag.") and sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return [k for k in seen if k is not Pipeline]


def test_every_stage_declares_fields_of_the_query_state():
    fields = {f.name for f in dataclasses.fields(QueryState)}
    classes = _stage_classes()
    assert len(classes) >= 18
    for kind in classes:
        assert kind.fills, f"{kind.__name__} declares nothing it fills"
        for name in kind.needs | kind.fills:
            head, _, key = name.partition(".")
            assert head in fields and (not key or head == "signals"), (kind.__name__, name)
    assert GIVEN <= fields


def test_certified_top_k_and_the_ranking_share_one_score():
    score = Score(prior=(("cosine", 0.7), ("positive_cosine", 0.3)), truth_weight=0.6)
    certified = CertifiedTopK(EmbeddingVerifier(), score=score)
    pipeline = (
        DenseCandidates() >> _verify() >> certified >> score.ranking() >> TopK() >> Backfill()
    )
    assert Score.of(*[s for s in pipeline if isinstance(s, SoftLogic | Combine)]) == score
    data = json.loads(json.dumps(pipeline.to_dict()))
    assert data["stages"][2]["init_parameters"]["score"] == {
        "type": "logic_rag.compose.score.Score",
        "init_parameters": {
            "prior": [["cosine", 0.7], ["positive_cosine", 0.3]],
            "truth_weight": 0.6,
            "tnorm": "product",
        },
    }
    assert Pipeline.from_dict(data) == pipeline
    other = Combine.of(cosine=0.7, positive_cosine=0.3, truth=0.5)
    with pytest.raises(ValueError, match="build both from one Score"):
        DenseCandidates() >> _verify() >> certified >> score.logic() >> other
    with pytest.raises(ValueError, match="build both from one Score"):
        DenseCandidates() >> _verify() >> certified >> SoftLogic("godel") >> score.combine()


def test_quality_certifies_by_the_score_it_ranks_by():
    settings = QualitySettings(positive_prior=0.2, truth_weight=0.4, tnorm="godel")
    stages = list(pipeline_of("quality", settings))
    at = next(i for i, s in enumerate(stages) if isinstance(s, CertifiedTopK))
    after = stages[at + 1 :]
    logic = next(s for s in after if isinstance(s, SoftLogic))
    combine = next(s for s in after if isinstance(s, Combine))
    assert stages[at].score == Score.of(logic, combine)
    assert stages[at].score == Score((("cosine", 0.8), ("positive_cosine", 0.2)), 0.4, "godel")


def test_a_score_checks_itself():
    with pytest.raises(ValueError, match="truth_weight must be positive"):
        Score(truth_weight=0.0)
    with pytest.raises(ValueError, match="truth_weight"):
        Score(prior=(("truth", 1.0),))
    with pytest.raises(ValueError, match="not a prior plus one 'truth' term"):
        Score.of(SoftLogic(), Combine.of(cosine=1.0))
    with pytest.raises(ValueError, match="tnorm must be one of"):
        (
            DenseCandidates()
            >> _verify()
            >> CertifiedTopK(
                EmbeddingVerifier(),
                score=Score(tnorm="lukasiewicz"),  # type: ignore[arg-type]
            )
        )
