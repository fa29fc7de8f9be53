"""Entailment tuning for dense retrievers (Dai et al., EMNLP 2024).

Why: a relevant passage usually *entails* an existence claim made from the query ("when
did X happen" -> "There exists a known time when X happened"). Entailment tuning puts
NLI pairs and (passage, claim) pairs into one prompt, "<premise> entails that
<hypothesis>", masks most hypothesis tokens and trains masked prediction with the
premise visible, before the usual contrastive fine-tuning.

Modules: :mod:`.claims` (question -> claim rules), :mod:`.prompt` (prompt text and token
spans), :mod:`.collator` (masked-hypothesis batches), :mod:`.data` (SNLI / MNLI / MS MARCO
loaders and the fixed query split), :mod:`.train` (head warm-up + tuning + saving).
Names are re-exported lazily, so importing this package (or running one of its modules
with ``python -m``) imports nothing heavy.
"""

from __future__ import annotations

from typing import Any

from logic_rag.lazy import lazy_exports

__all__ = [
    "Claim",
    "EncodedPrompt",
    "EntailmentTuningArgs",
    "MaskedHypothesisCollator",
    "PromptText",
    "build_prompt",
    "coverage_report",
    "encode_prompt",
    "question_to_claim",
    "run_entailment_tuning",
    "split_queries",
]

_WHERE = {
    "Claim": "claims",
    "coverage_report": "claims",
    "question_to_claim": "claims",
    "EncodedPrompt": "prompt",
    "PromptText": "prompt",
    "build_prompt": "prompt",
    "encode_prompt": "prompt",
    "MaskedHypothesisCollator": "collator",
    "split_queries": "data",
    "EntailmentTuningArgs": "train",
    "run_entailment_tuning": "train",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
