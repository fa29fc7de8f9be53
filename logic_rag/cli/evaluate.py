"""``logic-rag eval``: retrieval metrics on BEIR folders, QUEST-style set metrics per
template, and answer quality with a judge (``eval rag``, :mod:`logic_rag.evals.rag.cli`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from logic_rag.cli.common import add_decomposer_flags, add_store_uri_flag, positive_int
from logic_rag.cli.settings import settings_of
from logic_rag.cli.verifier_flags import add_verifier_flags


def add_parser(sub: Any) -> None:
    """``eval beir``, ``eval quest`` and ``eval rag`` on the sub-command parsers ``sub``."""
    p = sub.add_parser("eval", help="evaluate retrieval on a benchmark")
    eval_sub = p.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    e = eval_sub.add_parser("beir", help="nDCG@10, R@100, RR@10 on a BEIR-format folder")
    e.add_argument("--data", required=True, help="folder with corpus.jsonl, queries.jsonl, qrels/")
    e.add_argument(
        "--model", default=None, help="registry name or local folder (default: embeddinggemma-300m)"
    )
    e.add_argument("--split", default="test", help="qrels split (default: test)")
    e.add_argument("--json", action="store_true", help="print the result as JSON")
    e.add_argument(
        "--strategy",
        default=None,
        help="logic strategies to compare, separated by commas (e.g. vanilla,rerank); "
        "default: plain dense retrieval",
    )
    e.add_argument("--index", default=None, help="index folder to reuse, or to write")
    add_store_uri_flag(e)
    add_verifier_flags(e)
    e.set_defaults(func=run_beir)

    e = eval_sub.add_parser("quest", help="QUEST-style set retrieval metrics per template")
    e.add_argument("--docs", help="QUEST documents.jsonl (or any corpus the loaders read)")
    e.add_argument("--queries", required=True, help="QUEST-format query file (e.g. test.jsonl)")
    e.add_argument("--out", required=True, help="folder for results.json (and report.md)")
    e.add_argument("--model", default=None, help="dense model (default: embeddinggemma-300m)")
    e.add_argument(
        "--strategy",
        default="rerank",
        help="strategy, or several separated by commas (vanilla,rerank,verify,quality,"
        "llm-rerank,setops,fusion,fusion-product,orthogonal,splade,splade-compose,splade-nrf)",
    )
    e.add_argument("--atoms", help="atom gold sets (default: atoms.jsonl beside --queries)")
    e.add_argument(
        "--index",
        help="index folder to reuse (searched with --model when given), or to write if it "
        "does not exist",
    )
    add_store_uri_flag(e)
    e.add_argument(
        "--gold-logic",
        action="store_true",
        help="use the QUEST template and atoms instead of the decomposer",
    )
    e.add_argument("--depth", type=positive_int, default=1000, help="ranking depth (default 1000)")
    e.add_argument(
        "--certify-k",
        type=positive_int,
        default=20,
        help="the k that --strategy quality is searched at: its LLM checks decide that top k, "
        "and its ranking stops there (default 20)",
    )
    e.add_argument(
        "--missing-gold",
        choices=["keep", "drop"],
        default="keep",
        help="gold pages that are not in the corpus: keep (score them as misses, default) or "
        "drop (score against the gold pages the corpus holds); either way they are reported",
    )
    add_decomposer_flags(e)
    add_verifier_flags(e)
    e.set_defaults(func=run_quest)

    from logic_rag.evals.rag.cli import add_rag_parser

    add_rag_parser(eval_sub)


def run_beir(args: argparse.Namespace) -> int:
    """``eval beir``: the metrics of plain dense retrieval, or of each ``--strategy``."""
    from logic_rag.evals.beir import evaluate_beir

    strategies = [s.strip() for s in (args.strategy or "").split(",") if s.strip()]
    result = evaluate_beir(
        args.data,
        model=args.model,
        split=args.split,
        strategies=strategies,
        index=args.index,
        store_uri=args.store_uri,
        settings=settings_of(args, strategies),
    )
    if args.json:
        print(json.dumps(result, indent=2))
    elif "strategies" in result:
        print(
            f"{result['model']} on {args.data}: {result['queries']} judged queries, "
            f"{result['documents']:,} documents"
        )
        for strategy, metrics in result["strategies"].items():
            row = "  ".join(f"{n} {v:.4f}" for n, v in metrics.items())
            print(f"  {strategy:<15} {row}")
    else:
        print(
            f"{result['model']} on {args.data}: {result['queries']} judged queries, "
            f"{result['documents']:,} documents"
        )
        for name, value in result["metrics"].items():
            print(f"  {name:<10} {value:.4f}")
    return 0


def run_quest(args: argparse.Namespace) -> int:
    """``eval quest``: results.json (and a report comparing several strategies)."""
    from logic_rag.evals.quest.runner import print_table, run_eval_quest

    strategies = [s.strip() for s in args.strategy.split(",") if s.strip()]
    results = run_eval_quest(
        docs=args.docs,
        queries=args.queries,
        out=args.out,
        model=args.model,
        strategies=strategies,
        atoms=args.atoms,
        index=args.index,
        store_uri=args.store_uri,
        gold_logic=args.gold_logic,
        depth=args.depth,
        decomposer=args.decomposer,
        decomposer_model=args.decomposer_model,
        settings=settings_of(args, strategies),
        missing_gold=args.missing_gold,
        certify_k=args.certify_k,
    )
    print_table(results)
    return 0
