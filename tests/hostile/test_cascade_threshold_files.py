"""Saved cascade samples are read strictly: keyed by corpus, verifier, encoder and
polarity (every field required), each value type- and range-checked, and every refusal
names the file (one line, no traceback)."""

from __future__ import annotations

import json

import pytest

from logic_rag.verifiers.thresholds import CascadeSample, CascadeThresholds

KEY = {"expensive": "llm:x", "encoder": "enc", "polarity": "positive", "corpus": "abc"}


def _write(tmp_path, *, key=KEY, scores=(0.2,), labels=(1.0,), weights=(1.0,), positive=(True,)):
    body = {
        "format": "logic-rag cascade thresholds",
        "version": 1,
        "key": key,
        "sample": {
            "scores": list(scores),
            "labels": list(labels),
            "weights": list(weights),
            "positive": list(positive),
        },
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(body, allow_nan=True))
    return path


def test_a_valid_file_with_the_same_key_loads(tmp_path):
    loaded = CascadeThresholds.load(_write(tmp_path), key=KEY)
    assert len(loaded.sample) == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"key": {**KEY, "corpus": "zzz"}}, "fitted for another corpus"),
        ({"key": {}}, "do not say which"),
        ({"key": {k: v for k, v in KEY.items() if k != "corpus"}}, "do not say which corpus"),
        ({"key": ["a"]}, "'key' must be an object"),
        ({"labels": (5.0,)}, "labels[0] = 5.0 is outside"),
        ({"positive": ("false",)}, "positive[0] is not true or false"),
        ({"weights": (-1.0,)}, "weights[0] = -1.0 is outside"),
        ({"weights": (float("nan"),)}, "NaN is not a number"),
        ({"scores": (10**400,)}, "scores[0]"),
        ({"scores": (0.1, 0.2)}, "differ in length"),
    ],
)
def test_bad_files_are_refused_with_the_file_named(tmp_path, changes, message):
    path = _write(tmp_path, **changes)
    with pytest.raises(ValueError) as caught:
        CascadeThresholds.load(path, key=KEY)
    text = str(caught.value)
    assert message in text and str(path) in text and "\n" not in text


def test_a_saved_sample_round_trips(tmp_path):
    sample = CascadeSample()
    sample.add(0.3, 0.9, 2.0, False)
    path = CascadeThresholds(sample, KEY).save(tmp_path / "s.json")
    again = CascadeThresholds.load(path, key=KEY)
    assert again.sample.scores == [0.3] and again.sample.positive == [False]
