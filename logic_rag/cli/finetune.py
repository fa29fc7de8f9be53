"""``logic-rag finetune RECIPE ...``: a fine-tuning recipe, given the arguments after its
name (``logic-rag finetune entailment --help`` is the recipe's own help)."""

from __future__ import annotations

import argparse
from typing import Any

#: The recipes of :mod:`logic_rag.finetune.recipes.cli` (``entailment`` has its own).
RECIPES = ("supcon", "logicol", "lore", "verifier", "logic-gemma", "logic-verifier")


def add_parser(sub: Any) -> None:
    """``finetune`` on the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "finetune",
        help="fine-tune a retriever or a verifier "
        "(recipes: supcon, logicol, lore, verifier, entailment; logic-gemma and "
        "logic-verifier rebuild the models logic-rag ships)",
        description="Run a fine-tuning recipe; arguments after the recipe name go to it "
        "(e.g. `logic-rag finetune entailment --help`).",
    )
    p.add_argument(
        "recipe",
        choices=[
            "supcon",
            "logicol",
            "lore",
            "verifier",
            "entailment",
            "logic-gemma",
            "logic-verifier",
        ],
        help="the recipe to run",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER, help="the recipe's own arguments")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Hand the remaining arguments to the recipe (imported only now: importing the CLI
    must not import fine-tuning code)."""
    if args.recipe == "entailment":
        from logic_rag.finetune.entailment.train import main as entailment_main

        return int(entailment_main(args.rest) or 0)
    if args.recipe in RECIPES:
        from logic_rag.finetune.recipes.cli import main as recipe_main

        return int(recipe_main(args.recipe, args.rest) or 0)
    raise ValueError(  # pragma: no cover - argparse restricts the choices
        f"unknown recipe {args.recipe!r}"
    )
