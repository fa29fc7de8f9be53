"""How often a hit's ✓ / ✗ / ? contradicts what is known about the page (issue 40).

Two checks, each for ``rerank`` (no LLM) and ``quality`` (LLM verdicts, replayed):

* QUEST-attr dev (seed-0 atom-disjoint split), queries whose gold logic has no OR: every
  constraint holds on a gold page, so each verdict a gold page in the top ``k`` shows
  should be ✓; reported are the shares shown ✗ and ?, and the share the LLM gave.
* boolq_not: each trap passage contains what its question excludes, so its NOT verdict
  should not be ✓; the passages are reranked as in ``experiments.rerankers_boolq`` (a
  dense store's top 20), and the NOT verdicts of every trap in the output are counted.

Queries are decomposed by the rules, as a user's are (the verdicts a user sees).

    python -m experiments.verdict_shares --index IDX --replay SCORES [--k 20]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

MARK = {True: "yes", False: "no", None: "unsure"}


def _has_or(logic: Any) -> bool:
    from logic_rag.query.algebra import Or

    if isinstance(logic, Or):
        return True
    children = list(getattr(logic, "args", ()) or ())
    if hasattr(logic, "arg"):
        children.append(logic.arg)
    return any(_has_or(c) for c in children)


def _shares(counts: Counter[str], llm: int) -> dict[str, Any]:
    total = sum(counts.values())
    out: dict[str, Any] = {"verdicts": total}
    for mark in ("yes", "no", "unsure"):
        out[mark] = round(counts[mark] / total, 3) if total else None
    out["from_llm"] = round(llm / total, 3) if total else None
    return out


def quest_shares(
    retriever: Any, verifier: Any, strategy: str, k: int, verifier_top: int | None = None
) -> dict[str, Any]:
    from experiments.quality_curve import dev_queries
    from logic_rag.evals.quest.runner import gold_logical_query
    from logic_rag.paths import shared_data_dir

    queries = dev_queries(shared_data_dir() / "quest" / "attr", per_template=0)
    chosen = [q for q in queries if (g := gold_logical_query(q)) is not None and not _has_or(g)]
    configured = retriever
    if verifier is not None:
        from dataclasses import replace

        settings = replace(retriever.settings_for(strategy), verifier=verifier)
        if verifier_top is not None:
            settings = replace(settings, verifier_top=verifier_top)
        configured = retriever.with_settings(settings)
    counts: Counter[str] = Counter()
    llm = 0
    for q in chosen:
        gold = set(q.docs)
        for hit in configured.search(q.query, k=k, strategy=strategy):
            if hit.title in gold or hit.id in gold:
                for name, verdict in hit.constraints.items():
                    counts[MARK[verdict]] += 1
                    llm += hit.constraint_sources.get(name) == "llm"
    return {"queries": len(chosen), **_shares(counts, llm)}


def boolq_shares(model: str, verifier: Any, strategy: str, top_n: int | None) -> dict[str, Any]:
    from experiments.rerankers_boolq import boolq_candidates
    from logic_rag.integrations._rerank import CandidateReranker

    case = boolq_candidates(model, 20)
    encoder, qids, traps = case.encoder, case.qids, case.traps
    extra = {"verifier": verifier} if verifier is not None else {}
    reranker = CandidateReranker(encoder, strategy=strategy, **extra)
    counts: Counter[str] = Counter()
    llm = 0
    for i, qid in enumerate(qids):
        docs, ranked = case.rerank(reranker, i, top_n)
        for r in ranked:
            if docs[r.position].id != traps[qid]:
                continue
            for name, verdict in r.hit.constraints.items():
                if name.startswith("NOT "):
                    counts[MARK[verdict]] += 1
                    llm += r.hit.constraint_sources.get(name) == "llm"
    return {"questions": len(qids), "top_n": top_n, **_shares(counts, llm)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="verdict_shares", description=__doc__.split("\n")[0])
    p.add_argument("--index", required=True, help="QUEST-attr index")
    p.add_argument(
        "--replay",
        help="relay scores file (experiments.llm_relay); without it: no LLM, only "
        "rerank (and verify with --verifier)",
    )
    p.add_argument("--model", help="query encoder over the index (e.g. logic-gemma)")
    p.add_argument(
        "--verifier", help="verify with this verifier spec (cross-encoder:logic-verifier)"
    )
    p.add_argument("--verifier-top", type=int, default=40, help="verify: the cascade's depth")
    p.add_argument(
        "--no-boolq", action="store_true", help="QUEST only (boolq re-embeds its passages)"
    )
    p.add_argument("--k", type=int, default=20, help="QUEST: the top k whose verdicts count")
    p.add_argument("--boolq-model", default="embeddinggemma-300m")
    p.add_argument("--boolq-top-n", type=int, default=None, help="boolq: the reranker's top_n")
    args = p.parse_args(argv)
    from experiments.llm_relay import ReplayGenerator
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.llm import LLMVerifier

    retriever = LogicRetriever.load(args.index, model=args.model)
    report: dict[str, Any] = {"k": args.k, "model": args.model or "index model"}
    if args.replay is None:
        report["quest rerank"] = quest_shares(retriever, None, "rerank", args.k)
        if not args.no_boolq:
            report["boolq rerank"] = boolq_shares(
                args.model or args.boolq_model, None, "rerank", args.boolq_top_n
            )
        if args.verifier:
            report["quest verify"] = quest_shares(
                retriever, args.verifier, "verify", args.k, args.verifier_top
            )
        print(json.dumps(report, indent=1))
        return 0
    if not Path(args.replay).is_file():
        print(f"verdict_shares: error: no scores file {args.replay}", file=sys.stderr)
        return 2
    verifier = LLMVerifier(
        generator=ReplayGenerator([args.replay], name=f"relay:{Path(args.replay).name}")
    )
    for strategy in ("rerank", "quality"):
        llm = verifier if strategy == "quality" else None
        report[f"quest {strategy}"] = quest_shares(retriever, llm, strategy, args.k)
        report[f"boolq {strategy}"] = boolq_shares(
            args.boolq_model, llm, strategy, args.boolq_top_n
        )
        print(json.dumps({s: report[s] for s in report if strategy in s}), file=sys.stderr)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
