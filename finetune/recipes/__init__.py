"""Fine-tuning recipes: SupCon, LogiCoL (+ ablation) and LORE on the real ST trainer.

* :mod:`.args`: :class:`ContrastiveArgs`, :class:`LoreArgs` (dataclasses = CLI flags).
* :mod:`.contrastive`: :func:`train_contrastive` (``supcon``, ``logicol``,
  ``logicol-noconstraints``).
* :mod:`.lore`: :func:`train_lore` (query encoder only; old indexes stay valid).
* :mod:`.training`: checkpoints, resume, atomic publishing of ``out/model``.
* :mod:`.card`: the model card (``README.md``) and ``logic_rag_training.json``.
* :mod:`.cli`: :func:`main` behind ``logic-rag finetune supcon|logicol|lore``.

Names resolve lazily (PEP 562): importing this package imports neither torch nor
sentence-transformers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ContrastiveArgs": "args",
    "LoreArgs": "args",
    "RecipeArgsError": "args",
    "CONTRASTIVE_LOSSES": "args",
    "train_contrastive": "contrastive",
    "build_contrastive_loss": "contrastive",
    "train_lore": "lore",
    "ENCODER_JSON": "training",
    "latest_checkpoint": "training",
    "CARD_FILE": "card",
    "TRAINING_JSON": "card",
    "main": "cli",
    "parse_args": "cli",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .args import CONTRASTIVE_LOSSES, ContrastiveArgs, LoreArgs, RecipeArgsError
    from .card import CARD_FILE, TRAINING_JSON
    from .cli import main, parse_args
    from .contrastive import build_contrastive_loss, train_contrastive
    from .lore import train_lore
    from .training import ENCODER_JSON, latest_checkpoint


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
