"""Training losses for logic-aware retrieval, one per module, in sentence-transformers' style.

Every loss takes the model first, is called as ``loss(sentence_features, labels)`` by
``SentenceTransformerTrainer``, and has ``get_config_dict()`` and ``citation``.

* :class:`MultiPositiveSupConLoss` (+ :class:`CachedMultiPositiveSupConLoss`): SupCon with all
  in-batch gold documents as positives.
* :class:`LogiCoLLoss` (+ :class:`CachedLogiCoLLoss`): SupCon plus subset and exclusion
  regularisers between logically related in-batch queries.
* :class:`LoreLoss`: tiered P > N1 > N2 loss, query encoder only.
* :mod:`.relations`: how positives and query relations reach the losses through the label column.

Names resolve lazily (PEP 562) so that importing this package does not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "MultiPositiveSupConLoss": "supcon",
    "multi_positive_supcon": "supcon",
    "CachedMultiPositiveSupConLoss": "cached_supcon",
    "LogiCoLLoss": "logicol",
    "logicol_components": "logicol",
    "CachedLogiCoLLoss": "cached_logicol",
    "LoreLoss": "lore",
    "lore_loss": "lore",
    "BatchRelations": "relations",
    "GoldSetRelations": "relations",
    "RelationProvider": "relations",
    "RelationError": "relations",
    "LABEL_QUERY_ID": "relations",
    "LABEL_DOC_ID": "relations",
    "LABEL_GROUP_ID": "relations",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .cached_logicol import CachedLogiCoLLoss
    from .cached_supcon import CachedMultiPositiveSupConLoss
    from .logicol import LogiCoLLoss, logicol_components
    from .lore import LoreLoss, lore_loss
    from .relations import (
        LABEL_DOC_ID,
        LABEL_GROUP_ID,
        LABEL_QUERY_ID,
        BatchRelations,
        GoldSetRelations,
        RelationError,
        RelationProvider,
    )
    from .supcon import MultiPositiveSupConLoss, multi_positive_supcon


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
