"""Command line: ``python -m logic_rag.evals.world --out DIR`` writes a generated world.

``--documents-only`` streams just ``documents.jsonl`` (bounded memory, for scale runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from .generate import WorldConfig, generate_world, write_documents, write_world

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the world generator."""
    p = argparse.ArgumentParser(
        prog="logic-rag-world",
        description="Generate a synthetic QUEST-format world (documents, atoms, query splits).",
    )
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.add_argument("--entities", type=int, default=3000, help="number of entities (default 3000)")
    p.add_argument("--train-queries", type=int, default=1000)
    p.add_argument("--val-queries", type=int, default=150)
    p.add_argument("--test-queries", type=int, default=350)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--documents-only",
        action="store_true",
        help="stream documents.jsonl only, in bounded memory (for very large corpora)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        config = WorldConfig(
            n_entities=args.entities,
            n_queries_per_split={
                "train": args.train_queries,
                "val": args.val_queries,
                "test": args.test_queries,
            },
            seed=args.seed,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if args.documents_only:
        stats = write_documents(config, args.out)
        print(json.dumps({k: str(v) if k == "path" else v for k, v in stats.items()}))
        return 0
    world = generate_world(config)
    paths = write_world(world, args.out)
    counts = world.manifest()["counts"]
    print(
        json.dumps(
            {
                "out": str(args.out),
                "files": sorted(p.name for p in paths.values()),
                "entities": counts["entities"],  # type: ignore[index]
                "atoms": counts["atoms"],  # type: ignore[index]
                "queries": counts["queries"],  # type: ignore[index]
                "seconds": round(time.perf_counter() - start, 2),
            }
        )
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
