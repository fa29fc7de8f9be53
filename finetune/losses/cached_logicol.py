"""GradCache version of :class:`LogiCoLLoss`, for the large groups-plus-random batches LogiCoL
wants (the regularisers only fire when related queries share a batch, and SupCon improves with
more in-batch documents) at the memory cost of ``mini_batch_size`` texts."""

from __future__ import annotations

from typing import Any

from sentence_transformers.base.losses.gradcache import CachedLossMixin

from logic_rag.finetune.losses._gradcache import GradCacheAdapter
from logic_rag.finetune.losses.cached_supcon import GRADCACHE_CITATION
from logic_rag.finetune.losses.logicol import LOGICOL_CITATION, LogiCoLLoss
from logic_rag.finetune.losses.relations import RelationProvider

__all__ = ["CachedLogiCoLLoss"]


class CachedLogiCoLLoss(GradCacheAdapter, CachedLossMixin, LogiCoLLoss):
    """:class:`LogiCoLLoss` with gradient caching: same value and gradients, bounded memory.

    Same arguments as :class:`LogiCoLLoss` plus ``mini_batch_size``, ``mini_batch_num_tokens``
    and ``show_progress_bar``; ``gather_across_devices`` as in
    :class:`~logic_rag.finetune.losses.cached_supcon.CachedMultiPositiveSupConLoss`.
    """

    def __init__(
        self,
        model: Any,
        relations: RelationProvider | None = None,
        temperature: float = 0.05,
        exclusion_weight: float = 0.1,
        subset_weight: float = 0.1,
        exclusion_margin: float = 0.2,
        subset_margin: float = 0.2,
        exclusion_temperature: float = 1.0,
        mini_batch_size: int = 32,
        mini_batch_num_tokens: int | None = None,
        show_progress_bar: bool = False,
        gather_across_devices: bool = False,
    ) -> None:
        LogiCoLLoss.__init__(
            self,
            model,
            relations=relations,
            temperature=temperature,
            exclusion_weight=exclusion_weight,
            subset_weight=subset_weight,
            exclusion_margin=exclusion_margin,
            subset_margin=subset_margin,
            exclusion_temperature=exclusion_temperature,
            gather_across_devices=gather_across_devices,
        )
        self._init_cache(mini_batch_size, mini_batch_num_tokens, show_progress_bar)

    @property
    def citation(self) -> str:
        return LOGICOL_CITATION + GRADCACHE_CITATION
