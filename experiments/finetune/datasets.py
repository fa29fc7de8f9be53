"""Build (or reuse) the held-out datasets of the experiments: generated world, WordNet, QUEST.

Why here: both experiments need the same thing, a QUEST-format folder with
``documents.jsonl``, ``atoms.jsonl`` and ``train/val/test.jsonl`` whose splits share no
atom, so what is measured on ``test`` is generalisation to unseen categories. Building is
skipped when the folder's manifest already exists (the experiments are resumable).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from logic_rag.finetune.data import TrainingSet

__all__ = ["DatasetSpec", "DatasetName", "prepare_dataset", "load_split", "training_set"]

DatasetName = Literal["world", "wordnet", "quest"]


@dataclass(frozen=True)
class DatasetSpec:
    """Size of a dataset build: ``size`` = entities (world) or documents (WordNet)."""

    name: DatasetName
    size: int
    train_queries: int = 1000
    val_queries: int = 150
    test_queries: int = 300
    seed: int = 0


def _manifest(folder: Path, name: DatasetName) -> Path:
    return folder / f"{name}.json"


def prepare_dataset(spec: DatasetSpec, folder: str | Path) -> Path:
    """Write the dataset into ``folder`` unless its manifest is already there; returns it."""
    out = Path(folder)
    if spec.name == "quest":
        # Real QUEST-attr: the split is by atom with seed 0 whatever the training seed, so
        # every seed is evaluated on the same dev queries; the builder checks its source.
        from logic_rag.finetune.data import build_quest_set

        return build_quest_set(out)
    if _manifest(out, spec.name).is_file():
        return out
    if spec.name == "world":
        from logic_rag.evals.world.generate import WorldConfig, generate_world, write_world

        config = WorldConfig(
            n_entities=spec.size,
            n_queries_per_split={
                "train": spec.train_queries,
                "val": spec.val_queries,
                "test": spec.test_queries,
            },
            seed=spec.seed,
        )
        write_world(generate_world(config), out)
    elif spec.name == "wordnet":
        from logic_rag.finetune.data import build_wordnet_set

        build_wordnet_set(out, max_docs=spec.size, seed=spec.seed)
    else:
        raise ValueError(f"unknown dataset {spec.name!r}; use 'world', 'wordnet' or 'quest'")
    return out


def load_split(folder: str | Path, split: str, *, limit: int | None = None) -> TrainingSet:
    """One split as a :class:`TrainingSet` with groups and distractors (atoms.jsonl)."""
    from logic_rag.finetune.data import load_quest_training_set

    root = Path(folder)
    path = root / f"{split}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; build the dataset with prepare_dataset")
    return load_quest_training_set(
        path, root / "documents.jsonl", atoms=root / "atoms.jsonl", limit=limit
    )


def training_set(folder: str | Path, *, variants: bool = True, seed: int = 0) -> TrainingSet:
    """The train split, plus Quest+Variants built from the *train* atoms only.

    Variants give every batch sibling queries (A, A AND B, A NOT B, ...) with exact gold
    sets, which LogiCoL's group batching and regularisers need; using only train atoms keeps
    val/test atoms unseen.
    """
    from logic_rag.finetune.data import add_variants

    root = Path(folder)
    base = load_split(root, "train")
    if not variants:
        return base
    return add_variants(base, root / "atoms.jsonl", split="train", seed=seed)
