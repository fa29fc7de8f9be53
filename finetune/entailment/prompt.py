"""The unified entailment prompt and which of its tokens belong to the hypothesis.

Why: NLI pairs (premise, hypothesis) and retrieval pairs (positive passage, claim) are put
in one form, ``The passage "<premise>" entails that <hypothesis>.`` (the template of the
authors' released code), so a single masked-prediction task trains on both. The collator
may only mask hypothesis tokens, so we return the character spans of premise and
hypothesis and, after tokenising, a per-token hypothesis mask computed from the fast
tokenizer's offsets. When the prompt is too long the *premise* is shortened first (token
by token, from the right), so the hypothesis - the part that is predicted - always fits;
only a hypothesis that alone exceeds ``max_length`` is cut as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PREFIX", "CONNECTOR", "SUFFIX", "PromptText", "EncodedPrompt", "build_prompt"]
__all__ += ["encode_prompt"]

PREFIX = 'The passage "'
CONNECTOR = '" entails that '
SUFFIX = "."


@dataclass(frozen=True)
class PromptText:
    """Prompt text with half-open character spans ``(start, end)`` of its two parts."""

    text: str
    premise_span: tuple[int, int]
    hypothesis_span: tuple[int, int]

    @property
    def premise(self) -> str:
        return self.text[self.premise_span[0] : self.premise_span[1]]

    @property
    def hypothesis(self) -> str:
        return self.text[self.hypothesis_span[0] : self.hypothesis_span[1]]


@dataclass(frozen=True)
class EncodedPrompt:
    """Token ids of a prompt plus, per token, whether it is a hypothesis / premise token."""

    input_ids: list[int]
    attention_mask: list[int]
    hypothesis_mask: list[bool]
    premise_mask: list[bool]
    prompt: PromptText
    truncated: bool

    def as_feature(self) -> dict[str, list[int]]:
        """The dict a collator consumes (lists of ints; booleans as 0/1)."""
        return {
            "input_ids": list(self.input_ids),
            "attention_mask": list(self.attention_mask),
            "hypothesis_mask": [int(b) for b in self.hypothesis_mask],
        }


def _clean_hypothesis(hypothesis: str) -> str:
    return hypothesis.strip().rstrip(".!").rstrip()


def build_prompt(premise: str, hypothesis: str) -> PromptText:
    """``The passage "<premise>" entails that <hypothesis>.`` with the spans of both parts.

    The hypothesis loses a trailing full stop (the template adds one, which is part of the
    connector and is never masked). An empty hypothesis raises ValueError: there would be
    nothing to predict.
    """
    premise = premise.strip()
    hyp = _clean_hypothesis(hypothesis)
    if not hyp:
        raise ValueError("build_prompt needs a non-empty hypothesis")
    p0 = len(PREFIX)
    p1 = p0 + len(premise)
    h0 = p1 + len(CONNECTOR)
    h1 = h0 + len(hyp)
    return PromptText(PREFIX + premise + CONNECTOR + hyp + SUFFIX, (p0, p1), (h0, h1))


def _span_mask(offsets: list[tuple[int, int]], span: tuple[int, int]) -> list[bool]:
    lo, hi = span
    return [end > start and start >= lo and end <= hi for start, end in offsets]


def _cut_to_tokens(tokenizer: Any, text: str, drop: int) -> str:
    """``text`` without its last ``drop`` tokens (cut at a token boundary)."""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = enc["offset_mapping"]
    keep = len(offsets) - drop
    if keep <= 0:
        return ""
    return text[: offsets[keep - 1][1]]


def encode_prompt(
    tokenizer: Any, premise: str, hypothesis: str, max_length: int = 256
) -> EncodedPrompt:
    """Tokenise the prompt (with special tokens) into at most ``max_length`` tokens.

    ``tokenizer`` must be a fast (Rust) tokenizer: the hypothesis mask comes from its
    offsets. Premise tokens are dropped first; see the module docstring.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError("encode_prompt needs a fast tokenizer (offset mapping); use_fast=True")
    min_len = tokenizer.num_special_tokens_to_add(pair=False) + 1
    if max_length < min_len + 8:
        raise ValueError(f"max_length={max_length} is too small for the prompt template")
    truncated = False
    prem, hyp = premise.strip(), _clean_hypothesis(hypothesis)
    for _ in range(8):  # token merges at the cut can need another pass; 8 is ample
        prompt = build_prompt(prem, hyp)
        enc = tokenizer(prompt.text, add_special_tokens=True, return_offsets_mapping=True)
        over = len(enc["input_ids"]) - max_length
        if over <= 0:
            offsets = [tuple(o) for o in enc["offset_mapping"]]
            return EncodedPrompt(
                input_ids=list(enc["input_ids"]),
                attention_mask=list(enc["attention_mask"]),
                hypothesis_mask=_span_mask(offsets, prompt.hypothesis_span),
                premise_mask=_span_mask(offsets, prompt.premise_span),
                prompt=prompt,
                truncated=truncated,
            )
        truncated = True
        if prem:
            prem = _cut_to_tokens(tokenizer, prem, over).rstrip()
        else:
            hyp = _cut_to_tokens(tokenizer, hyp, over).rstrip() or hyp[:1]
    raise RuntimeError("encode_prompt could not fit the prompt into max_length")  # pragma: no cover
