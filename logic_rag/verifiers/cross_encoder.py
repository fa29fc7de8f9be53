"""Cross-encoder verifier: a sentence-transformers ``CrossEncoder`` reads atom and page.

A bi-encoder compares two independently computed vectors; a cross-encoder reads the
constraint and the page together, so it can check "1990s" against "a 1994 film". Train one
with ``logic-rag finetune verifier`` (QUEST attributions, optionally NLI pairs) and pass
its folder. The model's single logit is P(page satisfies atom) after a sigmoid.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from logic_rag.verifiers.base import PairVerifier

__all__ = ["CrossEncoderVerifier"]


@dataclass(frozen=True, eq=True)
class CrossEncoderVerifier(PairVerifier):
    """P(page satisfies atom) from a binary ``CrossEncoder`` (a local folder).

    Attributes:
        model: folder of a sentence-transformers cross-encoder with one output label.
        batch_size: pairs per forward pass.
        max_length: tokens per (atom, page) pair; longer pages are truncated.
        device: torch device (``None``: sentence-transformers' choice).
    """

    model: str = ""
    batch_size: int = 64
    max_length: int = 256
    device: str | None = None
    name: str = "cross-encoder"
    _loaded: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError(
                "CrossEncoderVerifier needs model=FOLDER (train one with `logic-rag finetune "
                "verifier`)"
            )

    def _resolved(self) -> Any:
        if "resolved" not in self._loaded:
            from logic_rag.models import resolve_model

            self._loaded["resolved"] = resolve_model(os.fspath(self.model))
        return self._loaded["resolved"]

    def fingerprint(self) -> str:
        return f"cross-encoder:{self._resolved().fingerprint}:{self.max_length}"

    def warm_up(self) -> None:
        self._model()

    def _model(self) -> Any:
        if "model" not in self._loaded:
            from sentence_transformers import CrossEncoder

            resolved = self._resolved()
            kwargs: dict[str, Any] = {}
            if resolved.adapter is not None:
                # The base is a bi-encoder: its classifier is new here and comes from the
                # adapter's head, so transformers' "newly initialised" report is noise.
                import transformers

                kwargs["num_labels"] = 1
                verbosity = transformers.logging.get_verbosity()
                transformers.logging.set_verbosity_error()
            try:
                model = CrossEncoder(
                    str(resolved.path),
                    device=self.device,
                    local_files_only=True,
                    trust_remote_code=False,
                    max_length=self.max_length,
                    **kwargs,
                )
            finally:
                if resolved.adapter is not None:
                    transformers.logging.set_verbosity(verbosity)
            if resolved.adapter is not None:
                from logic_rag.encoders.adapter import attach_adapter

                attach_adapter(model, resolved.adapter, merge=True)
                model.eval()
            labels = model.num_labels
            if labels != 1:
                raise ValueError(
                    f"{self.model} has {labels} output labels; the cross-encoder verifier "
                    f"needs a binary model with one logit (train it with `logic-rag finetune "
                    f"verifier`)"
                )
            self._loaded["model"] = model
        return self._loaded["model"]

    def score_texts(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        import torch

        model = self._model()
        logits = model.predict(
            [list(p) for p in pairs],
            batch_size=self.batch_size,
            activation_fn=torch.nn.Identity(),
            convert_to_numpy=True,
            show_progress_bar=len(pairs) >= 4096,
        )
        return np.asarray(logits, dtype=np.float64).reshape(len(pairs))
