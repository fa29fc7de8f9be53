"""experiments/llm_relay.py: what a recording asks is what the scorer answers and the
replay returns; a prompt never scored is refused, not answered with a guess."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.llm_relay import (
    RecordingGenerator,
    ReplayGenerator,
    prompt_id,
    score,
    write_prompts,
)
from logic_rag.verifiers.llm import LLMVerifier


class _Scorer:
    """A test-double scorer: log P(Yes) grows with the prompt's length."""

    name = "double"

    def choice_logprobs(self, prompts, choices, *, system=None):
        return np.asarray([[-1.0 / len(p), -0.5] for p in prompts])


PAIRS = [("berries", "Strawberry. A red fruit."), ("films", "Alien. A 1979 film."), ("films", "x")]


def test_record_score_replay_round_trip(tmp_path):
    recorder = RecordingGenerator()
    LLMVerifier(generator=recorder).score_texts(PAIRS)
    LLMVerifier(generator=recorder).score_texts(PAIRS[:1])  # asked again: recorded once
    assert len(recorder.asked) == 3
    prompts = tmp_path / "prompts.jsonl.gz"
    assert write_prompts(prompts, recorder.asked) == 3
    assert write_prompts(prompts, recorder.asked) == 0  # nothing new is appended
    out = tmp_path / "scores.jsonl"
    assert score(_Scorer(), prompts, out)["prompts"] == 3
    assert score(_Scorer(), prompts, out)["prompts"] == 0  # a rerun scores nothing twice
    assert len(out.read_text().splitlines()) == 3

    replay = LLMVerifier(generator=ReplayGenerator([out], name="relay:test"))
    live = LLMVerifier(generator=_Scorer())
    assert np.allclose(replay.score_texts(PAIRS), live.score_texts(PAIRS))
    assert replay.fingerprint().startswith("llm:relay:test:")


def test_a_prompt_never_scored_is_refused(tmp_path):
    out = tmp_path / "scores.jsonl"
    system, prompt = "s", "p"
    out.write_text(json.dumps({"id": prompt_id(system, prompt), "yes": -0.1, "no": -2.0}) + "\n")
    replay = ReplayGenerator([out], name="relay:test")
    assert replay.choice_logprobs([prompt], ("Yes", "No"), system=system).tolist() == [[-0.1, -2.0]]
    with pytest.raises(LookupError, match="1 of 2 prompts were never scored"):
        replay.choice_logprobs([prompt, "other"], ("Yes", "No"), system=system)
    with pytest.raises(LookupError):  # the system message is part of the key
        replay.choice_logprobs([prompt], ("Yes", "No"), system="another")
