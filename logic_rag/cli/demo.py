"""``logic-rag demo`` (logic queries on WordNet's definitions beside plain dense
retrieval) and ``logic-rag world`` (a generated QUEST-format world)."""

from __future__ import annotations

import argparse
from typing import Any

from logic_rag.cli.common import positive_int

#: The most entities ``logic-rag world`` generates: 100 million ran unbounded.
MAX_WORLD_ENTITIES = 100_000


def entity_count(text: str) -> int:
    """An argparse type: a number of entities, 1 to :data:`MAX_WORLD_ENTITIES`."""
    value = positive_int(text)
    if value > MAX_WORLD_ENTITIES:
        raise argparse.ArgumentTypeError(f"at most {MAX_WORLD_ENTITIES:,}, got {value:,}")
    return value


def add_parsers(sub: Any) -> None:
    """``demo`` and ``world`` on the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "demo",
        help="logic queries on WordNet's definitions, next to plain dense retrieval; writes "
        "a report",
        description="Index WordNet 3.0's noun glosses (they ship with logic-rag), answer "
        "logic queries with known answer sets by plain dense retrieval and by the default "
        "strategy, print each hit's constraint verdicts and write report.md.",
    )
    p.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    p.add_argument("--model", default=None, help="dense model (default: the default dense model)")
    p.add_argument(
        "--wordnet-dir",
        default=None,
        metavar="DIR",
        help="a full WordNet 3.0: folder holding data.noun or data.noun.gz (default: the "
        "demo's glosses that ship with logic-rag)",
    )
    p.add_argument(
        "--per-template",
        type=positive_int,
        default=30,
        help="sampled queries per QUEST template for the recall table (default 30)",
    )
    p.add_argument(
        "--show", type=positive_int, default=5, help="hits printed per showcase query (default 5)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run_demo)

    p = sub.add_parser("world", help="generate a QUEST-format world (documents, queries, atoms)")
    p.add_argument("--out", required=True)
    p.add_argument("--entities", type=entity_count, default=3000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run_world)


def run_demo(args: argparse.Namespace) -> int:
    """Run the WordNet demo into ``--out`` (never inside an index folder)."""
    from logic_rag.evals.demo import run_demo as demo
    from logic_rag.outputs import check_outside_index

    check_outside_index(args.out)
    demo(
        args.out,
        model=args.model,
        wordnet_dir=args.wordnet_dir,
        per_template=args.per_template,
        seed=args.seed,
        show=args.show,
    )
    return 0


def run_world(args: argparse.Namespace) -> int:
    """Generate a world into ``--out`` (never inside an index folder)."""
    from logic_rag.evals.world import main as world_main
    from logic_rag.outputs import check_outside_index

    check_outside_index(args.out)
    argv = ["--out", args.out, "--entities", str(args.entities), "--seed", str(args.seed)]
    return int(world_main(argv) or 0)
