"""``logic-rag fit-cascade``: label a sample of (constraint, page) pairs with the LLM once
per index, for the calibrated bounds of ``--strategy quality``."""

from __future__ import annotations

import argparse
from typing import Any

from logic_rag.cli.queries import read_queries
from logic_rag.cli.settings import strategy_settings
from logic_rag.cli.verifier_flags import add_verifier_flags


def add_parser(sub: Any) -> None:
    """``fit-cascade`` on the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "fit-cascade",
        help="label a sample of (constraint, page) pairs with the LLM once per index: the "
        "calibrated bounds of --strategy quality",
        description="Label an importance sample of (constraint, page) pairs of QUERIES with "
        "the LLM verifier and save it: --strategy quality --quality-bounds calibrated "
        "--quality-thresholds FILE uses it.",
    )
    p.add_argument("index_dir", help="index folder")
    p.add_argument("--queries", required=True, help="JSONL with a 'query' field, or one per line")
    p.add_argument("--out", required=True, help="where to write the fitted sample (JSON)")
    p.add_argument("--model", default=None, help="query encoder (default: the index's model)")
    p.add_argument("--sample", type=int, default=300, help="pairs to label (default 300)")
    p.add_argument("--strategy", default="quality", help=argparse.SUPPRESS)
    add_verifier_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Label the sample and write it to ``--out``."""
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.outputs import check_output_file
    from logic_rag.verifiers.cascade import fit_cascade

    check_output_file(args.out)  # never into an index folder, a device or a folder
    queries = [text for _, text in read_queries(args.queries)]
    if not queries:
        raise ValueError(
            f"{args.queries}: no queries (JSONL with a 'query' field, or one per line)"
        )
    retriever = LogicRetriever.load(args.index_dir, model=args.model)
    settings = strategy_settings(args, args.strategy)
    if settings is not None:
        retriever = retriever.with_settings(settings)
    fitted = fit_cascade(
        retriever, queries, args.out, strategy=args.strategy, sample_size=args.sample
    )
    print(
        f"labelled {len(fitted.sample)} pairs of {min(len(queries), 256)} queries with "
        f"{fitted.key.get('expensive', '?')}; saved to {args.out}. Use it with "
        f"--strategy quality --quality-bounds calibrated --quality-thresholds {args.out}"
    )
    return 0
