"""Command line of the recipes: every dataclass field becomes a ``--flag`` (generic).

Why generic: the dataclasses in :mod:`.args` are the single source of truth, so a new field
is on the command line, in the Python API and in the model card at once. ``train`` becomes
``--train``; ``max_steps`` becomes ``--max-steps``; booleans get ``--resume / --no-resume``.
Used by ``logic-rag finetune supcon|logicol|lore|verifier``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
import typing
from collections.abc import Sequence
from typing import Any

from logic_rag.errors import LogicRagError

from ..shipped.logic_gemma import LogicGemmaArgs
from ..shipped.logic_verifier import LogicVerifierArgs
from ..verifier.train import VerifierArgs
from .args import CONTRASTIVE_LOSSES, ContrastiveArgs, LoreArgs

__all__ = ["RECIPES", "build_parser", "parse_args", "main"]

RECIPES: dict[str, type] = {
    "supcon": ContrastiveArgs,
    "logicol": ContrastiveArgs,
    "lore": LoreArgs,
    "verifier": VerifierArgs,
    "logic-gemma": LogicGemmaArgs,
    "logic-verifier": LogicVerifierArgs,
}
"""Recipe name -> its arguments dataclass (supcon/logicol preset ``loss``)."""

_HELP = {
    "train": "QUEST-format query JSONL (query, docs, original_query, metadata)",
    "docs": "documents JSONL the gold ids point to",
    "out": "run folder: checkpoints/ and the final model/",
    "base": "registry name or local model folder",
    "atoms": "atoms.jsonl ({atom, docs}) for distractors (and --variants)",
    "variants": "add Quest+Variants built from the train atoms of --atoms (LogiCoL A.1)",
    "loss": "supcon | logicol | logicol-noconstraints",
    "batching": "groups | random (default: groups for logicol*, random for supcon)",
    "alpha": "share of random queries per batch (contrastive) / weight of negatives (LORE)",
    "beta": "weight of distractors (LORE)",
    "resume": "resume from the newest checkpoint in OUT/checkpoints",
    "limit": "read only the first N training queries",
    "exclusion_temperature": "softmax temperature of LogiCoL's exclusion term (authors' code: "
    "1.0, where the term has no gradient; see ContrastiveArgs)",
    "lambda_exclusion": "weight of LogiCoL's exclusion term (paper: 0.1)",
    "gamma_exclusion": "margin of LogiCoL's exclusion hinge, in nats (paper: 0.2)",
    "lambda_subset": "weight of LogiCoL's subset term (paper: 0.1)",
    "gamma_subset": "margin of LogiCoL's subset hinge (paper: 0.2)",
    "gather_across_devices": "under torchrun / accelerate launch (several processes), gather "
    "every process's embeddings so that in-batch negatives span the global batch",
    "cached": "GradCache variant of the loss (large batches, bounded memory)",
    "nli": "folder with SNLI/MultiNLI files (the shared data's nli/) to mix in or train on",
    "nli_limit": "at most this many NLI pairs",
    "teacher": "JSONL of {atom, title, score}: a slower verifier's verdicts on the training "
    "queries' candidates, as soft labels (python -m logic_rag.finetune.verifier.teacher)",
    "teacher_ratio": "teacher non-members (score < 0.5) kept per member, drawn at random "
    "(0 keeps every pair)",
    "max_length": "tokens per (constraint, page) pair",
    "random_per_positive": "same-domain random negatives per positive",
    "hard_negatives": "add one hard-negative column per row: pages of the query's atoms known "
    "to be outside its gold set (needs --atoms), then --mined-negatives near-misses of the base "
    "model (sentence-transformers mine_hard_negatives, known positives excluded)",
    "mined_negatives": "mined hard negatives per query with --hard-negatives (0: known only)",
    "lora_rank": "train a LoRA adapter of this rank instead of every weight (0: full "
    "fine-tuning); the model folder then holds the adapter only",
    "lora_alpha": "LoRA scaling numerator (updates are scaled by alpha / rank)",
    "data": "the shared data folder (default: $LOGIC_RAG_DATA, else ../shared/data)",
    "install": "copy the finished adapter into the package (logic_rag/shipped/NAME) and print "
    "its SHA-256 pins for logic_rag/models.py",
    "wordnet_queries": "WordNet set-algebra training queries drawn (seeded) from the WordNet "
    "training split",
    "wordnet_docs": "WordNet glosses in the training corpus (the demo's categories excluded)",
    "wordnet_pairs": "WordNet membership pairs (category, gloss, label) mixed into training",
    "query_only": "train the query encoder only; documents stay on a frozen copy of the base, "
    "so an index built with the base keeps serving the tuned model (no re-encoding)",
}


def _scalar_type(annotation: Any) -> tuple[type, bool]:
    """``(type, optional)`` of a field annotation such as ``int | None``."""
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"unsupported field type {annotation!r}")
        return inner[0], True
    return annotation, False


def build_parser(recipe: str) -> argparse.ArgumentParser:
    """Parser whose flags are the fields of the recipe's dataclass."""
    if recipe not in RECIPES:
        raise LogicRagError(f"unknown recipe {recipe!r}; choose one of {', '.join(RECIPES)}")
    cls = RECIPES[recipe]
    hints = typing.get_type_hints(cls)
    parser = argparse.ArgumentParser(
        prog=f"logic-rag finetune {recipe}",
        description=(cls.__doc__ or "").strip().splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    for field in dataclasses.fields(cls):
        flag = "--" + field.name.replace("_", "-")
        kind, optional = _scalar_type(hints[field.name])
        required = field.default is dataclasses.MISSING
        default = None if required else field.default
        if recipe in ("supcon", "logicol") and field.name == "loss":
            default = "supcon" if recipe == "supcon" else "logicol"
        help_text = _HELP.get(field.name, " ")
        if kind is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=default, help=help_text
            )
            continue
        kwargs: dict[str, Any] = {"type": kind, "help": help_text, "dest": field.name}
        if required:
            kwargs["required"] = True
        else:
            kwargs["default"] = default
        if field.name == "loss":
            choices = ("supcon",) if recipe == "supcon" else CONTRASTIVE_LOSSES[1:]
            kwargs["choices"] = choices
        elif field.name == "batching":
            kwargs["choices"] = ("groups", "random")
        if optional:
            kwargs["metavar"] = kind.__name__.upper()
        parser.add_argument(flag, **kwargs)
    return parser


def parse_args(recipe: str, argv: Sequence[str]) -> ContrastiveArgs | LoreArgs | VerifierArgs:
    """Parse ``argv`` into the recipe's dataclass and validate it (files must exist).

    Errors (unknown flag, missing file, bad value) exit with status 2 and a usage message.
    """
    parser = build_parser(recipe)
    namespace = parser.parse_args(list(argv))
    args = RECIPES[recipe](**vars(namespace))
    try:
        args.validate()
    except ValueError as exc:
        parser.error(str(exc))
    return args


def main(recipe: str, argv: Sequence[str]) -> int:
    """Run a recipe from command-line arguments; print the model folder; return 0."""
    args = parse_args(recipe, argv)
    if isinstance(args, LogicGemmaArgs):
        from ..shipped.logic_gemma import train_logic_gemma

        path = train_logic_gemma(args)
    elif isinstance(args, LogicVerifierArgs):
        from ..shipped.logic_verifier import train_logic_verifier

        path = train_logic_verifier(args)
    elif isinstance(args, VerifierArgs):
        from ..verifier.train import train_verifier

        path = train_verifier(args)
    elif isinstance(args, LoreArgs):
        from .lore import train_lore

        path = train_lore(args)
    else:
        from .contrastive import train_contrastive

        path = train_contrastive(args)
    print(f"saved {path.resolve()}", file=sys.stdout)
    return 0
