"""Settings and stage values are checked against their annotations (issue 51 items 6, 12).

``RerankSettings(truth_weight=nan)``, a NaN evidence temperature and NaN or inf
``Combine`` weights returned zero hits, silently (through the LlamaIndex reranker's
``from_dict(settings=...)`` every node was dropped); a candidate depth of -5, 0 or NaN
failed with a ``KeyError`` holding the query, ``"100"`` with a ``TypeError``, 5,000 levels
of nesting with a ``RecursionError``; an unknown t-norm or text field changed the scores.
"""

from __future__ import annotations

import math

import pytest

from logic_rag.candidates.dense import DenseCandidates
from logic_rag.compose.logic import SoftLogic
from logic_rag.pipeline.ranking import Combine, TopK
from logic_rag.pipeline.stage import Pipeline, Stage
from logic_rag.strategy_settings import (
    EvidenceSettings,
    FusionSettings,
    QualitySettings,
    RerankSettings,
    VerifySettings,
)


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: RerankSettings(truth_weight=math.nan), "truth_weight must be a finite number"),
        (lambda: RerankSettings(positive_prior=math.inf), "positive_prior must be a finite"),
        (
            lambda: RerankSettings(evidence=EvidenceSettings(temperature=math.nan)),
            "temperature must be a finite number",
        ),
        (lambda: FusionSettings(negation_weight=-math.inf), "negation_weight must be a finite"),
        (lambda: RerankSettings(candidates=math.nan), "candidates must be a whole number"),
        (lambda: RerankSettings(candidates="100"), "candidates must be a whole number"),
        (lambda: RerankSettings(candidates=True), "candidates must be a whole number"),
        (lambda: RerankSettings(tnorm="lukasiewicz"), "tnorm must be one of"),
        (lambda: VerifySettings(verifier_weight=math.nan), "verifier_weight must be a finite"),
        (lambda: QualitySettings(delta=math.nan), "delta must be a finite"),
        (lambda: EvidenceSettings(atom_depth=-5), "atom_depth must be at least 1"),
        (lambda: RerankSettings.from_dict({"candidates": _deep(5000)}), "a list"),
        (lambda: RerankSettings.from_dict({"evidence": {"atom_depth": 0}}), "at least 1"),
    ],
)
def test_bad_settings_values_are_one_clear_error(make, words):
    with pytest.raises(ValueError, match=words) as caught:
        make()
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


@pytest.mark.parametrize(
    ("stage", "words"),
    [
        (Combine.of(cosine=1.0, truth=math.nan), r"weights\[1\]\[1\] must be a finite number"),
        (Combine.of(cosine=math.inf), "must be a finite number"),
        (DenseCandidates(depth=-5), "depth must be at least 1"),
        (DenseCandidates(depth=0), "depth must be at least 1"),
        (DenseCandidates(depth=math.nan), "depth must be a whole number"),
        (DenseCandidates(depth="100"), "depth must be a whole number"),
        (DenseCandidates(text="title"), "text must be one of"),
        (SoftLogic(tnorm="lukasiewicz"), "tnorm must be one of"),
    ],
)
def test_bad_stage_values_are_refused_when_a_pipeline_is_made(stage, words):
    with pytest.raises(ValueError, match=words):
        Pipeline([stage, TopK()])


def test_bad_values_in_a_pipeline_file_are_refused_on_load():
    data = Pipeline([DenseCandidates(), Combine.of(dense=1.0), TopK()]).to_dict()
    data["stages"][0]["init_parameters"]["depth"] = -5
    with pytest.raises(ValueError, match="depth must be at least 1"):
        Stage.from_dict(data)


def test_good_values_still_pass():
    RerankSettings(truth_weight=0, candidates=5)  # an int for a float is fine
    import numpy as np

    Pipeline([DenseCandidates(depth=np.int64(3)), Combine.of(cosine=1.0), TopK()])
