"""Fine-tuning data: QUEST-format loaders, Quest+Variants, the WordNet real-prose set.

* :mod:`.examples`: :class:`TrainQuery` / :class:`TrainingSet` (gold sets, logical groups,
  distractors), :func:`load_quest_training_set`, and the dataset layouts for the losses
  (:func:`to_contrastive_dataset`, :func:`to_lore_dataset`).
* :mod:`.variants`: :func:`build_variants` (LogiCoL's Quest+Variants) and
  :func:`write_quest_format`.
* :mod:`.wordnet`: :func:`build_wordnet_set`, a category-labelled set of real glosses.
* :mod:`.hard_negatives`: hard negatives known from the atoms' sets and mined with the base
  encoder (:func:`with_hard_negatives`).
* :mod:`.quest`: the real QUEST-attr queries as an experiment folder (split by atom).

Names resolve lazily (PEP 562), so importing this package imports neither ``datasets`` nor
torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "TrainQuery": "examples",
    "TrainingSet": "examples",
    "TrainingDataError": "examples",
    "load_quest_training_set": "examples",
    "load_documents_map": "examples",
    "compute_distractors": "examples",
    "group_by_shared_atoms": "examples",
    "to_contrastive_dataset": "examples",
    "to_lore_dataset": "examples",
    "PositiveResampler": "examples",
    "VARIANT_SHAPES": "variants",
    "add_variants": "variants",
    "build_variants": "variants",
    "compose_variants": "variants",
    "quest_text": "variants",
    "write_quest_format": "variants",
    "known_hard_negatives": "hard_negatives",
    "mined_hard_negatives": "hard_negatives",
    "mining_cache_folder": "hard_negatives",
    "ranked_hard_negatives": "hard_negatives",
    "with_hard_negatives": "hard_negatives",
    "build_quest_set": "quest",
    "quest_atom_sets": "quest",
    "WordNetMissingError": "wordnet",
    "build_wordnet_set": "wordnet",
    "default_wordnet_dir": "wordnet",
    "read_wordnet_nouns": "wordnet",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .examples import (
        PositiveResampler,
        TrainingDataError,
        TrainingSet,
        TrainQuery,
        compute_distractors,
        group_by_shared_atoms,
        load_documents_map,
        load_quest_training_set,
        to_contrastive_dataset,
        to_lore_dataset,
    )
    from .hard_negatives import (
        known_hard_negatives,
        mined_hard_negatives,
        mining_cache_folder,
        ranked_hard_negatives,
        with_hard_negatives,
    )
    from .quest import build_quest_set, quest_atom_sets
    from .variants import (
        VARIANT_SHAPES,
        add_variants,
        build_variants,
        compose_variants,
        quest_text,
        write_quest_format,
    )
    from .wordnet import (
        WordNetMissingError,
        build_wordnet_set,
        default_wordnet_dir,
        read_wordnet_nouns,
    )


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
