"""Batches for masked-hypothesis prediction (the entailment-tuning objective).

Why: the model must recover the hypothesis from the visible premise, so only hypothesis
tokens are masked, each independently with probability ``beta`` (the paper uses a high
rate; its released code sets ``mlm_probability`` to 0.8 in the collator default and 0.2
in its main script - both are available here). The premise, the template words
("The passage", "entails that", the final full stop), special tokens and padding are
never masked. Masked positions become ``[MASK]`` every time - the authors' code replaces
BERT's 80/10/10 scheme by always-[MASK]; ``replacement="bert"`` restores 80/10/10.
Labels hold the original id at masked positions and -100 everywhere else.

``mask_scope="all"`` masks every non-special token of the prompt at rate ``beta`` (the
ablation without a visible premise); with ``beta=0.15`` and ``replacement="bert"`` it is
plain BERT MLM, which :mod:`.train` uses to warm up the freshly initialised MLM head.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

__all__ = ["MaskedHypothesisCollator"]

MaskScope = Literal["hypothesis", "all"]
Replacement = Literal["mask", "bert"]


class MaskedHypothesisCollator:
    """Pad features and mask hypothesis tokens; usable as a transformers data collator.

    A feature is either a dict with ``input_ids``, ``attention_mask`` and
    ``hypothesis_mask`` (from :meth:`EncodedPrompt.as_feature`) or a dict with raw
    ``premise`` and ``hypothesis`` text, which is encoded here with ``max_length``.
    Pass a seeded ``torch.Generator`` as ``generator`` for reproducible masks.
    """

    def __init__(
        self,
        tokenizer: Any,
        beta: float = 0.8,
        mask_scope: MaskScope = "hypothesis",
        max_length: int = 256,
        replacement: Replacement = "mask",
        generator: Any = None,
    ) -> None:
        if not 0.0 < beta <= 1.0:
            raise ValueError(f"beta must be in (0, 1], got {beta}")
        if mask_scope not in ("hypothesis", "all"):
            raise ValueError(f"mask_scope must be 'hypothesis' or 'all', got {mask_scope!r}")
        if replacement not in ("mask", "bert"):
            raise ValueError(f"replacement must be 'mask' or 'bert', got {replacement!r}")
        if tokenizer.mask_token_id is None or tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer needs a mask token and a pad token")
        self.tokenizer = tokenizer
        self.beta = beta
        self.mask_scope = mask_scope
        self.max_length = max_length
        self.replacement = replacement
        self.generator = generator

    def _feature(self, feature: Mapping[str, Any]) -> Mapping[str, Any]:
        if "input_ids" in feature:
            missing = {"attention_mask", "hypothesis_mask"} - set(feature)
            if missing:
                raise KeyError(f"feature lacks {sorted(missing)}; use EncodedPrompt.as_feature")
            return feature
        if "premise" in feature and "hypothesis" in feature:
            from logic_rag.finetune.entailment.prompt import encode_prompt

            enc = encode_prompt(
                self.tokenizer, feature["premise"], feature["hypothesis"], self.max_length
            )
            return enc.as_feature()
        raise KeyError(
            "a feature needs input_ids/attention_mask/hypothesis_mask or premise/hypothesis"
        )

    def __call__(self, features: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        import torch

        feats = [self._feature(f) for f in features]
        if not feats:
            raise ValueError("cannot collate an empty batch")
        width = max(len(f["input_ids"]) for f in feats)
        pad = self.tokenizer.pad_token_id
        n = len(feats)
        input_ids = torch.full((n, width), pad, dtype=torch.long)
        attention = torch.zeros((n, width), dtype=torch.long)
        hyp = torch.zeros((n, width), dtype=torch.bool)
        for i, f in enumerate(feats):
            k = len(f["input_ids"])
            input_ids[i, :k] = torch.as_tensor(f["input_ids"], dtype=torch.long)
            attention[i, :k] = torch.as_tensor(f["attention_mask"], dtype=torch.long)
            hyp[i, :k] = torch.as_tensor(f["hypothesis_mask"], dtype=torch.bool)

        special = torch.tensor(
            [
                self.tokenizer.get_special_tokens_mask(row, already_has_special_tokens=True)
                for row in input_ids.tolist()
            ],
            dtype=torch.bool,
        )
        if self.mask_scope == "hypothesis":
            eligible = hyp & ~special & attention.bool()
        else:
            eligible = ~special & attention.bool()

        probs = torch.full((n, width), self.beta)
        draws = torch.rand((n, width), generator=self.generator)
        masked = (draws < probs) & eligible

        labels = torch.full_like(input_ids, -100)
        labels[masked] = input_ids[masked]
        corrupted = input_ids.clone()
        if self.replacement == "mask":
            corrupted[masked] = self.tokenizer.mask_token_id
        else:
            choice = torch.rand((n, width), generator=self.generator)
            to_mask = masked & (choice < 0.8)
            to_random = masked & (choice >= 0.8) & (choice < 0.9)
            corrupted[to_mask] = self.tokenizer.mask_token_id
            random_ids = torch.randint(
                len(self.tokenizer), (n, width), generator=self.generator, dtype=torch.long
            )
            corrupted[to_random] = random_ids[to_random]
        return {"input_ids": corrupted, "attention_mask": attention, "labels": labels}
