"""GradCache plumbing shared by the cached losses: embeddings per mini-batch -> one loss.

sentence-transformers' ``CachedLossMixin`` embeds every column in mini-batches without a
graph, asks ``calculate_loss`` for the loss over the whole batch (and its gradient with
respect to the embeddings), then re-embeds each mini-batch with a graph and pushes the cached
gradients through. Our in-batch losses need the whole ``B x D`` score matrix at once but it is
small (the memory is in the encoder activations), so ``calculate_loss`` computes it in one go.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

__all__ = ["GradCacheAdapter"]


class GradCacheAdapter:
    """Mixin for a loss with ``compute_loss_from_embeddings(queries, docs, labels)``.

    Put it after ``CachedLossMixin`` and before the plain loss class in the bases.
    """

    mini_batch_size: int

    def _init_cache(
        self, mini_batch_size: int, mini_batch_num_tokens: int | None, show_progress_bar: bool
    ) -> None:
        from sentence_transformers.base.losses.gradcache import (
            _validate_mini_batch_num_tokens,
            has_static_embedding_input,
        )

        if mini_batch_size < 1:
            raise ValueError(f"mini_batch_size must be >= 1, got {mini_batch_size}")
        if has_static_embedding_input(self.model):  # type: ignore[attr-defined]
            raise ValueError(
                f"{type(self).__name__} cannot split a StaticEmbedding model's inputs into "
                "mini-batches; use the non-cached loss"
            )
        _validate_mini_batch_num_tokens(mini_batch_num_tokens)
        self.mini_batch_size = int(mini_batch_size)
        self.mini_batch_num_tokens = mini_batch_num_tokens
        self.show_progress_bar = show_progress_bar

    def calculate_loss(
        self, reps: list[list[Tensor]], labels: Any = None, *, with_backward: bool = False
    ) -> Tensor:
        queries = torch.cat(reps[0])
        docs = torch.cat([torch.cat(column) for column in reps[1:]])
        loss = self.compute_loss_from_embeddings(queries, docs, labels)  # type: ignore[attr-defined]
        if with_backward:
            loss.backward()
            loss = loss.detach()
        return loss

    def forward(self, sentence_features: Any, labels: Any = None) -> Tensor:
        sentence_features = list(sentence_features)
        if len(sentence_features) < 2:
            raise ValueError(
                f"expected (query, positive[, negatives...]) columns, got {len(sentence_features)}"
            )
        return self.forward_cached(sentence_features, labels)  # type: ignore[attr-defined]

    def get_config_dict(self) -> dict[str, Any]:
        return {
            **super().get_config_dict(),  # type: ignore[misc]
            "mini_batch_size": self.mini_batch_size,
            "mini_batch_num_tokens": self.mini_batch_num_tokens,
        }
