"""The verdict calibration: a fitted map from the embedding probability to P(holds), read
from ``logic-rag adapt``'s calibration.json or a fit-cascade sample, refused for another
encoder, and applied to the ✓ / ✗ / ? of embedding verdicts only."""

from __future__ import annotations

import json

import numpy as np
import pytest

from logic_rag.verifiers.thresholds import CascadeSample, CascadeThresholds
from logic_rag.verifiers.verdicts import EvidenceCalibration, VerdictRule


def _adapt_file(tmp_path, xs, ys, sha="abc"):
    path = tmp_path / "calibration.json"
    body = {
        "map": {"x": xs, "y": ys},
        "fingerprint": {"encoder": {"name": "minilm", "weights_sha256": sha}},
        "input": {"kind": "embedding_p"},
    }
    path.write_text(json.dumps(body))
    return path


def test_adapt_map_is_read_and_applied(tmp_path):
    calibration = EvidenceCalibration.load(
        _adapt_file(tmp_path, [0.0, 0.5, 1.0], [0.05, 0.2, 0.95])
    )
    np.testing.assert_allclose(calibration(np.array([0.25, 0.75])), [0.125, 0.575])
    calibration.check_encoder("abc")
    with pytest.raises(ValueError, match="another encoder"):
        calibration.check_encoder("def")


def test_fit_cascade_sample_gives_its_isotonic_map(tmp_path):
    sample = CascadeSample()
    for s in np.linspace(0, 1, 201):
        sample.add(float(s), float(s > 0.6), 1.0, True)
    path = CascadeThresholds(sample, {"corpus": "x"}).save(tmp_path / "t.json")
    calibration = EvidenceCalibration.load(path)
    assert calibration(np.array([0.2]))[0] < 0.05 and calibration(np.array([0.9]))[0] > 0.95


@pytest.mark.parametrize(
    ("xs", "ys", "message"),
    [
        ([0.0, 1.0], [0.9, 0.1], "non-decreasing"),
        ([0.0, 1.0], [0.0], "one length"),
        ([0.0, 1.0], [0.0, 2.0], r"in \[0, 1\]"),
    ],
)
def test_bad_maps_are_refused_naming_the_file(tmp_path, xs, ys, message):
    path = _adapt_file(tmp_path, xs, ys)
    with pytest.raises(ValueError, match=message) as caught:
        EvidenceCalibration.load(path)
    assert str(path) in str(caught.value)


def test_a_retriever_shows_calibrated_embedding_verdicts(tmp_path, minilm):
    """Over a corpus large enough for corpus evidence, a map that sends every embedding
    probability to 0.9 turns every positive constraint ✓ and every NOT ✗."""
    from logic_rag import Document, LogicRetriever

    docs = [
        Document(id=str(i), text=f"page {i} about topic {i % 7} and thing {i % 5}")
        for i in range(120)
    ]
    retriever = LogicRetriever.build(docs, model=minilm)
    path = _adapt_file(tmp_path, [0.0, 1.0], [0.9, 0.9], sha=minilm.fingerprint)
    calibrated = retriever.with_settings(_calibrated(retriever, path))
    hits = calibrated.search("topic 3 but not thing 2", k=5)
    for hit in hits:
        for name, verdict in hit.constraints.items():
            assert verdict is (not name.startswith("NOT ")), (name, hit.constraint_scores)
    other = _adapt_file(tmp_path, [0.0, 1.0], [0.9, 0.9], sha="another")
    with pytest.raises(ValueError, match="another encoder"):
        retriever.with_settings(_calibrated(retriever, other)).search("topic 3", k=2)


def _calibrated(retriever, path):
    """The retriever's own strategy's settings with ``path`` as the verdict calibration."""
    from dataclasses import replace

    settings = retriever.settings_for(retriever.strategy)
    return replace(settings, logic=replace(settings.logic, verdict_calibration=str(path)))


def test_the_rule_bands():
    rule = VerdictRule()
    assert rule.verdict(0.8) is True and rule.verdict(0.2) is False and rule.verdict(0.5) is None
    assert rule.verdict(0.8, relative=True) is None and rule.verdict(0.05, relative=True) is False
