"""strategies.pipeline_over_candidates: a registry strategy rewritten to run over given
candidates (no model needed: the pipelines are compared stage by stage)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pytest

from logic_rag.candidates.atoms import AtomCandidates
from logic_rag.candidates.dense import DenseCandidates
from logic_rag.candidates.given import GivenCandidates
from logic_rag.strategies import (
    DENSE_STRATEGIES,
    SPARSE_STRATEGIES,
    STRATEGIES,
    pipeline_of,
    pipeline_over_candidates,
)
from logic_rag.strategy_settings import EvidenceSettings, VerifySettings
from logic_rag.verifiers.base import Checked, Verifier, Verify
from logic_rag.verifiers.embedding import CandidateEmbeddingVerifier, EmbeddingVerifier


@dataclass(frozen=True)
class _Costly(Verifier):
    """Stands in for an LLM verifier: must be passed through as the same object."""

    name: str = "costly"

    def check(self, requests, ctx):
        return [Checked(np.full((len(r.atoms), len(r.rows)), 0.5)) for r in requests]


@dataclass(frozen=True)
class _Cascade(Verifier):
    """Stands in for a cascade verifier that holds a cheap and an expensive verifier."""

    cheap: Verifier
    expensive: Verifier
    fallbacks: tuple[Verifier, ...] = ()
    name: str = "cascade"

    def check(self, requests, ctx):
        return self.cheap.check(requests, ctx)


def _settings(name: str):
    """Strategy ``name``'s settings with a non-default evidence and prior where it has them."""
    cls = STRATEGIES[name].settings
    own = {f.name for f in fields(cls)}
    values: dict = {}
    if "evidence" in own:
        values["evidence"] = EvidenceSettings(threshold_rank=7, temperature=0.2)
    if "positive_prior" in own:
        values["positive_prior"] = 0.3
    return cls(**values)


def _expected(name: str, settings, given: GivenCandidates, *, candidates: bool):
    """The reference rewrite, written out plainly: sources -> given, verifiers swapped."""
    out, placed = [], False
    for stage in pipeline_of(name, settings):
        if isinstance(stage, DenseCandidates | AtomCandidates):
            if not placed:
                out.append(GivenCandidates(given.scores, name="dense"))
                placed = True
            continue
        if candidates and isinstance(stage, Verify) and type(stage.verifier) is EmbeddingVerifier:
            v = stage.verifier
            swapped = CandidateEmbeddingVerifier(
                v.atom_depth, v.threshold_rank, v.temperature, v.passage_weight
            )
            stage = Verify(swapped, stage.top, stage.weight, stage.polarity)
        out.append(stage)
    return out


@pytest.mark.parametrize("name", DENSE_STRATEGIES)
@pytest.mark.parametrize("calibration", ["candidates", "corpus"])
def test_every_dense_strategy_runs_over_given_candidates(name, calibration):
    settings = _settings(name)
    given = GivenCandidates((0.9, 0.5, 0.1))
    got = pipeline_over_candidates(name, settings, given, calibration=calibration)
    want = _expected(name, settings, given, candidates=calibration == "candidates")
    assert list(got) == want
    assert not any(isinstance(s, DenseCandidates | AtomCandidates) for s in got)
    verifiers = [s.verifier for s in got if isinstance(s, Verify)]
    if calibration == "candidates":
        assert all(type(v) is CandidateEmbeddingVerifier for v in verifiers)
        assert all(v.threshold_rank == 7 and v.temperature == 0.2 for v in verifiers)
    else:
        assert all(type(v) is EmbeddingVerifier for v in verifiers)


def test_the_given_source_takes_the_name_of_what_it_replaces():
    given = GivenCandidates(None, name="input")
    (first, *_rest) = pipeline_over_candidates("rerank", None, given)
    assert first == GivenCandidates(None, name="dense")
    # orthogonal has no query-side source to replace: its own source searches the
    # candidates' index, and the given source is not added.
    ortho = pipeline_over_candidates("orthogonal", None, given)
    assert not any(isinstance(s, GivenCandidates) for s in ortho)


def test_the_settings_reach_the_rewritten_pipeline():
    costly = _Costly()
    settings = VerifySettings(
        verifier=costly, verifier_top=5, verifier_weight=0.4, verifier_atoms="all"
    )
    stages = list(pipeline_over_candidates("verify", settings, GivenCandidates()))
    described = " >> ".join(s.describe() for s in stages)
    assert "Cutoff(n=5)" in described
    second = [s for s in stages if isinstance(s, Verify) and s.verifier is costly]
    assert second == [Verify(costly, None, 0.4, "all")]  # the very same verifier object
    # positive_prior: the prior is blended with the positive atoms' cosine.
    assert "positive_cosine" in described


def test_embedding_verifiers_nested_in_verifiers_are_swapped_at_any_depth():
    costly = _Costly()
    cascade = _Cascade(
        cheap=EmbeddingVerifier(threshold_rank=3),
        expensive=costly,
        fallbacks=(EmbeddingVerifier(temperature=0.3), costly),
    )
    stages = list(
        pipeline_over_candidates("verify", VerifySettings(verifier=cascade), GivenCandidates())
    )
    verifiers = [s.verifier for s in stages if isinstance(s, Verify)]
    (swapped,) = [v for v in verifiers if isinstance(v, _Cascade)]
    assert swapped.cheap == CandidateEmbeddingVerifier(threshold_rank=3)
    assert type(swapped.cheap) is CandidateEmbeddingVerifier
    assert swapped.expensive is costly
    assert type(swapped.fallbacks[0]) is CandidateEmbeddingVerifier
    assert swapped.fallbacks[0].temperature == 0.3 and swapped.fallbacks[1] is costly
    assert cascade.cheap == EmbeddingVerifier(threshold_rank=3)  # the original is untouched
    corpus = pipeline_over_candidates(
        "verify", VerifySettings(verifier=cascade), GivenCandidates(), calibration="corpus"
    )
    assert any(isinstance(s, Verify) and s.verifier is cascade for s in corpus)


def test_a_candidate_verifier_already_there_is_kept():
    mine = CandidateEmbeddingVerifier(threshold_rank=2)
    stages = pipeline_over_candidates("verify", VerifySettings(verifier=mine), GivenCandidates())
    assert any(isinstance(s, Verify) and s.verifier is mine for s in stages)


@pytest.mark.parametrize("name", SPARSE_STRATEGIES)
def test_strategies_that_need_another_index_are_refused_by_name(name):
    with pytest.raises(ValueError, match="SPLADE") as error:
        pipeline_over_candidates(name, None, GivenCandidates())
    for ok in DENSE_STRATEGIES:
        assert ok in str(error.value)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        pipeline_over_candidates("nope", None, GivenCandidates())
    with pytest.raises(ValueError, match="calibration"):
        pipeline_over_candidates("rerank", None, GivenCandidates(), calibration="x")
    with pytest.raises(TypeError, match="GivenCandidates"):
        pipeline_over_candidates("rerank", None, DenseCandidates())
