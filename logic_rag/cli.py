"""The ``logic-rag`` command line.

Every heavy import (torch, sentence-transformers, FAISS) happens inside a sub-command,
so ``logic-rag --help`` answers instantly.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser"]


def _cmd_index(args: argparse.Namespace) -> int:
    from logic_rag.corpus import load_documents
    from logic_rag.retriever import Retriever

    docs = load_documents(args.docs, args.format)
    print(f"read {len(docs):,} documents from {args.docs}", file=sys.stderr)
    retriever = Retriever.build(
        docs, model=args.model, index=args.index, show_progress_bar=not args.quiet
    )
    out = retriever.save(args.out)
    print(
        f"indexed {len(docs):,} documents with {retriever.encoder.name} "
        f"({retriever.index.dim}-d, {args.index}) into {out}",
        file=sys.stderr,
    )
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    from logic_rag.retriever import Retriever

    retriever = Retriever.load(args.index_dir, model=args.model)
    hits = retriever.search(args.query, k=args.k)
    if args.json:
        json.dump([h.to_json() for h in hits], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        for hit in hits:
            snippet = " ".join(hit.text.split())[:160]
            title = f"{hit.title} | " if hit.title else ""
            print(f"{hit.rank:>3}. {hit.score:.4f}  [{hit.id}] {title}{snippet}")
    return 0


def _cmd_models(args: argparse.Namespace) -> int:
    from logic_rag.errors import ModelNotFoundError
    from logic_rag.models import MODELS

    for spec in MODELS.values():
        try:
            where = str(spec.locate().path)
        except ModelNotFoundError:
            where = f"not installed: {spec.install}"
        print(f"{spec.name:<14} {spec.kind:<10} {spec.description}\n{'':<14} {where}")
    return 0


def _cmd_eval_beir(args: argparse.Namespace) -> int:
    from logic_rag.evals.beir import evaluate_beir

    result = evaluate_beir(args.data, model=args.model, split=args.split)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{result['model']} on {args.data}: {result['queries']} judged queries, "
            f"{result['documents']:,} documents"
        )
        for name, value in result["metrics"].items():
            print(f"  {name:<10} {value:.4f}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(
        prog="logic-rag",
        description="Retrieval for RAG that respects AND / OR / NOT in a query.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("index", help="embed a corpus and write an index folder")
    p.add_argument(
        "--docs", required=True, help="corpus: QUEST/BEIR/plain JSONL, text, or a BEIR folder"
    )
    p.add_argument("--out", required=True, help="index folder to write (replaced atomically)")
    p.add_argument(
        "--model", default="minilm", help="registry name or local folder (default: minilm)"
    )
    p.add_argument(
        "--index", default="flat", choices=["flat", "hnsw", "ivfpq"], help="FAISS index kind"
    )
    p.add_argument("--format", default="auto", choices=["auto", "quest", "beir", "jsonl", "text"])
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("search", help="search an index folder")
    p.add_argument("index_dir", help="folder written by `logic-rag index`")
    p.add_argument("query", help="the query text")
    p.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument("--json", action="store_true", help='print [{"id","title","score","text"}]')
    p.add_argument("--model", default=None, help="query encoder (default: the index's model)")
    p.set_defaults(func=_cmd_search)

    p = sub.add_parser("eval", help="evaluate retrieval on a benchmark")
    eval_sub = p.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    e = eval_sub.add_parser("beir", help="nDCG@10, R@100, RR@10 on a BEIR-format folder")
    e.add_argument("--data", required=True, help="folder with corpus.jsonl, queries.jsonl, qrels/")
    e.add_argument("--model", default="minilm", help="registry name or local folder")
    e.add_argument("--split", default="test", help="qrels split (default: test)")
    e.add_argument("--json", action="store_true", help="print the result as JSON")
    e.set_defaults(func=_cmd_eval_beir)

    p = sub.add_parser("models", help="list the offline model registry")
    p.set_defaults(func=_cmd_models)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``logic-rag`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from logic_rag.errors import LogicRagError

    try:
        return int(args.func(args) or 0)
    except (LogicRagError, FileNotFoundError, FileExistsError, ValueError) as exc:
        print(f"logic-rag {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
