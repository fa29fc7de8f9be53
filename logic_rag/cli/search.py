"""``logic-rag search``: one query, or every query of a file with one model load."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from logic_rag.cli.checks import check_search_early
from logic_rag.cli.common import (
    add_decomposer_flags,
    add_store_uri_flag,
    quiet_model_loading,
    strict_json,
)
from logic_rag.cli.output import print_hits, terminal_safe
from logic_rag.cli.queries import read_queries
from logic_rag.cli.settings import strategy_settings
from logic_rag.cli.verifier_flags import add_verifier_flags

#: Queries of a ``--queries`` file searched per batch: one encoder and index call each,
#: while memory stays bounded whatever the file's length.
QUERY_BATCH = 64


def add_parser(sub: Any) -> None:
    """``search`` on the sub-command parsers ``sub``."""
    p = sub.add_parser("search", help="search an index folder")
    p.add_argument("index_dir", help="folder written by `logic-rag index`")
    add_store_uri_flag(p)
    p.add_argument("query", nargs="?", default=None, help="the query text (or --queries)")
    p.add_argument(
        "--queries",
        default=None,
        metavar="FILE",
        help="answer every query of FILE with one model load: JSONL with a 'query' (or "
        "'text') field and an optional 'id', or one query per line",
    )
    p.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument(
        "--json",
        action="store_true",
        help='print [{"id","title","score","text"}] (with --queries: one JSON object per '
        'query per line, {"id","query","hits"})',
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="show each hit's constraints with their scores, and the pages a NOT pushed "
        "out of the top k (in --json: constraints, constraint_scores, logic, pushed_down)",
    )
    p.add_argument("--model", default=None, help="query encoder (default: the index's model)")
    p.add_argument(
        "--strategy",
        default="rerank",
        help="vanilla, rerank (default), verify, quality (an LLM checks the uncertain "
        "constraints), llm-rerank (an LLM checks each page against the whole query), setops, "
        "fusion, fusion-product, orthogonal, splade, splade-compose, splade-nrf",
    )
    add_decomposer_flags(p)
    add_verifier_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Search the index folder; print the hits as text or ``--json``."""
    from logic_rag.encoders.dense import check_unicode
    from logic_rag.logic_retriever import LogicRetriever

    if (args.query is None) == (args.queries is None):
        raise ValueError("give one query, or --queries FILE (JSONL or one query per line)")
    query = None if args.query is None else check_unicode(args.query, "the query")
    check_search_early(args)
    quiet_model_loading()
    retriever = LogicRetriever.load(args.index_dir, model=args.model, store_uri=args.store_uri)
    if args.decomposer != "rules":
        from logic_rag.query.auto import make_decomposer

        retriever.decomposer = make_decomposer(args.decomposer, model=args.decomposer_model)
    settings = strategy_settings(args, args.strategy)
    if settings is not None:
        retriever = retriever.with_settings(settings)
    if query is None:
        return search_many(retriever, args)
    hits = explained_search(retriever, [query], args)[0]
    if args.json:
        keep = None if args.explain else ("id", "title", "score", "text")
        rows = [{k: v for k, v in h.to_json().items() if keep is None or k in keep} for h in hits]
        json.dump(strict_json(rows), sys.stdout, ensure_ascii=False, indent=2, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    print_hits(hits, explain=args.explain)
    return 0


def search_many(retriever: Any, args: argparse.Namespace) -> int:
    """``--queries FILE``: every query answered by the one loaded model, in batches.

    Text mode prints a block per query; ``--json`` prints one JSON object per line,
    ``{"id", "query", "hits"}`` (with ``--explain`` also ``"pushed_down"``).
    """
    batch: list[tuple[str, str]] = []
    answered = 0

    def flush() -> None:
        results = explained_search(retriever, [q for _, q in batch], args)
        for (qid, text), hits in zip(batch, results, strict=True):
            if args.json:
                keep = None if args.explain else ("id", "title", "score", "text")
                row: dict[str, Any] = {
                    "id": qid,
                    "query": text,
                    "hits": [
                        {k: v for k, v in h.to_json().items() if keep is None or k in keep}
                        for h in hits
                    ],
                }
                if args.explain:
                    row["pushed_down"] = getattr(hits, "pushed_down", [])
                sys.stdout.write(json.dumps(strict_json(row), ensure_ascii=False) + "\n")
            else:
                print(f"query {terminal_safe(qid)}: {terminal_safe(text)}")
                print_hits(hits, explain=args.explain)
                print()
        batch.clear()

    for qid, text in read_queries(args.queries):
        batch.append((qid, text))
        answered += 1
        if len(batch) == QUERY_BATCH:
            flush()
    if batch:
        flush()
    if not answered:
        raise ValueError(
            f"{args.queries}: no queries (JSONL with a 'query' field, or one per line)"
        )
    return 0


class Hits(list):  # type: ignore[type-arg]
    """A query's hits, plus (with ``--explain``) the pages its negations pushed down."""

    pushed_down: list[dict[str, Any]]


def explained_search(retriever: Any, queries: list[str], args: argparse.Namespace) -> list[Any]:
    """Search ``queries``; with ``--explain``, also find the pages a NOT pushed down.

    A NOT pushed a page down when the same search without the query's negated conjuncts
    (its positive part, same strategy) ranks the page in the top k and the real search does
    not: the counterfactual isolates the negation, whatever the thresholds. The page's rank
    and NOT scores under the real query come from a deeper search (``4 k``, at least 40);
    the hits shown are those of the plain search, unchanged.
    """
    from logic_rag.query.algebra import negated_atoms, positive_part

    hits_of = retriever.search_batch(queries, k=args.k, strategy=args.strategy)
    if not args.explain:
        return hits_of
    out = [Hits(hits) for hits in hits_of]
    for top in out:
        top.pushed_down = []
    logic = [retriever.decompose(q).query for q in queries]
    negating = [i for i, q in enumerate(logic) if negated_atoms(q) and positive_part(q)]
    if not negating:
        return out
    picked = [queries[i] for i in negating]
    without = retriever.search_batch(
        picked,
        k=args.k,
        strategy=args.strategy,
        logical_queries=[positive_part(logic[i]) for i in negating],
    )
    deep = retriever.search_batch(picked, k=max(4 * args.k, 40), strategy=args.strategy)
    for i, plain, deeper in zip(negating, without, deep, strict=True):
        shown = {h.id for h in out[i]}
        now = {h.id: h for h in deeper}
        for before in plain:
            if before.id in shown:
                continue
            hit = now.get(before.id)
            scores = hit.constraint_scores if hit is not None else {}
            nots = (
                []
                if hit is None
                else [v for c, v in hit.constraints.items() if c.startswith("NOT ")]
            )
            if nots and all(v is True for v in nots):
                continue  # every NOT holds (✓): something else pushed the page down
            out[i].pushed_down.append(
                {
                    "id": before.id,
                    "title": before.title,
                    "rank_without_not": before.rank,
                    "rank": hit.rank if hit is not None else None,
                    "by": {c: s for c, s in scores.items() if c.startswith("NOT ")},
                }
            )
    return out
