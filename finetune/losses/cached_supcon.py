"""GradCache version of :class:`MultiPositiveSupConLoss`: large batches in bounded memory.

In-batch contrastive losses get better with more in-batch documents, but the batch cannot be
split for gradient accumulation because every query is contrasted with every document. The
cached loss computes the exact same value and gradients as the plain one while holding the
encoder activations of only ``mini_batch_size`` texts at a time (Gao et al. 2021).
"""

from __future__ import annotations

from typing import Any

from sentence_transformers.base.losses.gradcache import CachedLossMixin

from logic_rag.finetune.losses._gradcache import GradCacheAdapter
from logic_rag.finetune.losses.relations import RelationProvider
from logic_rag.finetune.losses.supcon import SUPCON_CITATION, MultiPositiveSupConLoss

__all__ = ["CachedMultiPositiveSupConLoss"]

GRADCACHE_CITATION = """
@misc{gao2021scaling,
    title={Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup},
    author={Luyu Gao and Yunyi Zhang and Jiawei Han and Jamie Callan},
    year={2021},
    eprint={2101.06983},
    archivePrefix={arXiv},
    primaryClass={cs.LG}
}
"""


class CachedMultiPositiveSupConLoss(GradCacheAdapter, CachedLossMixin, MultiPositiveSupConLoss):
    """:class:`MultiPositiveSupConLoss` with gradient caching; same arguments plus
    ``mini_batch_size`` (texts embedded at once), ``mini_batch_num_tokens`` and
    ``show_progress_bar``. Use eval-mode dropout or accept that the cached and plain losses
    draw different dropout masks.

    ``gather_across_devices`` works as in the plain loss: the loss over the cached embeddings
    is computed on the gathered global batch (its backward runs the collective on every rank
    in step) and the replayed mini-batches push each rank's share of the gradient into its
    encoder; sentence-transformers' ``CachedLossMixin`` synchronises DDP once per step."""

    def __init__(
        self,
        model: Any,
        relations: RelationProvider | None = None,
        temperature: float = 0.05,
        mini_batch_size: int = 32,
        mini_batch_num_tokens: int | None = None,
        show_progress_bar: bool = False,
        gather_across_devices: bool = False,
    ) -> None:
        MultiPositiveSupConLoss.__init__(
            self,
            model,
            temperature=temperature,
            relations=relations,
            gather_across_devices=gather_across_devices,
        )
        self._init_cache(mini_batch_size, mini_batch_num_tokens, show_progress_bar)

    @property
    def citation(self) -> str:
        return SUPCON_CITATION + GRADCACHE_CITATION
