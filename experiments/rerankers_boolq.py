"""The rerankers' strategies on the boolq_not exclusion questions (chooses their default).

Each question of ``$LOGIC_RAG_DATA/negation/boolq_not`` has one answer passage and one
trap passage that its exclusion rules out (646 passages in all). A plain dense index over
the passages plays the vector store: its top ``--candidates`` passages per question, with
their scores, go to :class:`~logic_rag.integrations._rerank.CandidateReranker` under each
strategy. Reported per strategy: R@1 (the answer first), MRR@10, and the share of
questions whose trap ranks above the answer (a trap outside the candidates ranks below).
``vanilla`` over given candidates keeps the store's order, so it is the baseline.

    python experiments/rerankers_boolq.py --model minilm --candidates 20

Prints one JSON object; nothing is written.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STRATEGIES = ("vanilla", "rerank", "verify", "setops", "fusion", "orthogonal")


@dataclass
class BoolqCandidates:
    """The boolq_not questions with a trap, and a dense store's candidates for each."""

    data: Any
    traps: dict[str, str]
    qids: list[str]
    texts: list[str]
    found: list[Any]
    by_id: dict[str, Any]
    encoder: Any

    def rerank(self, reranker: Any, i: int, top_n: int | None) -> tuple[list[Any], list[Any]]:
        """Question ``i``'s candidate passages and ``reranker``'s order of them."""
        docs = [self.by_id[h.id] for h in self.found[i]]
        ranked = reranker.rerank(
            self.texts[i],
            [d.text for d in docs],
            titles=[d.title for d in docs],
            scores=[h.score for h in self.found[i]],
            top_n=top_n,
        )
        return docs, ranked


def boolq_candidates(model: str, candidates: int, *, limit: int | None = None) -> BoolqCandidates:
    """Load boolq_not, embed its passages with ``model`` and take each question's top
    ``candidates`` (what the rerankers are given)."""
    from logic_rag.corpus import load_beir
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.paths import shared_data_dir
    from logic_rag.retriever import DenseRetriever

    folder = shared_data_dir() / "negation" / "boolq_not"
    data = load_beir(folder)
    with open(Path(folder) / "traps.tsv", encoding="utf-8", newline="") as handle:
        traps = {row[0]: row[1] for row in csv.reader(handle, delimiter="\t") if row}
    qids = [q for q in data.queries if q in data.qrels and q in traps][:limit]
    encoder = DenseEncoder(model)
    store = DenseRetriever.build(data.corpus, model=encoder, show_progress_bar=False)
    texts = [data.queries[q] for q in qids]
    found = store.search_batch(texts, candidates)
    by_id = {d.id: d for d in data.corpus}
    return BoolqCandidates(data, traps, qids, texts, found, by_id, encoder)


def _metrics(ranked: list[str], answer: str, trap: str) -> tuple[float, float, bool]:
    rank = ranked.index(answer) + 1 if answer in ranked else None
    trap_rank = ranked.index(trap) + 1 if trap in ranked else None
    r1 = float(rank == 1)
    rr = 1.0 / rank if rank is not None and rank <= 10 else 0.0
    above = trap_rank is not None and (rank is None or trap_rank < rank)
    return r1, rr, above


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--calibration", default="candidates", choices=["candidates", "corpus"])
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument(
        "--replay",
        default=None,
        help="an LLM verifier for quality / llm-rerank / verify, answering from this relay "
        "scores file (experiments.llm_relay)",
    )
    parser.add_argument("--top-n", type=int, default=None, help="the reranker's top_n (k)")
    parser.add_argument("--verifier-atoms", default="positive", help="atoms the LLM checks")
    args = parser.parse_args(argv)

    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.paths import shared_data_dir

    if not (shared_data_dir() / "negation" / "boolq_not").is_dir():
        print("boolq_not not found; set LOGIC_RAG_DATA", file=sys.stderr)
        return 2
    case = boolq_candidates(args.model, args.candidates, limit=args.limit)
    encoder, qids, traps, data = case.encoder, case.qids, case.traps, case.data

    report: dict[str, object] = {
        "model": args.model,
        "candidates": args.candidates,
        "calibration": args.calibration,
        "questions": len(qids),
    }
    extra: dict[str, object] = {}
    if args.replay:
        from experiments.llm_relay import ReplayGenerator
        from logic_rag.verifiers.llm import LLMVerifier

        generator = ReplayGenerator([args.replay], name=f"relay:{Path(args.replay).name}")
        extra = {
            "verifier": LLMVerifier(generator=generator),
            "config": {"verifier_atoms": args.verifier_atoms},
        }
        report.update(top_n=args.top_n, verifier_atoms=args.verifier_atoms)
    cache = None
    for strategy in args.strategies.split(","):
        reranker = CandidateReranker(
            encoder,
            strategy=strategy,
            calibration=args.calibration,
            **(extra if strategy in ("quality", "llm-rerank", "verify") else {}),
        )
        if cache is not None:
            reranker.cache = cache  # one set of candidate vectors for every strategy
        cache = reranker.cache
        totals = [0.0, 0.0, 0]
        calls: list[int] = []
        started = time.perf_counter()
        for i, qid in enumerate(qids):
            docs, ranked = case.rerank(reranker, i, args.top_n)
            order = [docs[r.position].id for r in ranked]
            info = (ranked[0].hit.logic or {}).get("llm") if ranked else None
            calls.append(int(info["calls"]) if info else 0)
            answer = next(iter(data.qrels[qid]))
            r1, rr, above = _metrics(order, answer, traps[qid])
            totals[0] += r1
            totals[1] += rr
            totals[2] += above
        n = len(qids)
        report[strategy] = {
            "R@1": round(totals[0] / n, 3),
            "MRR@10": round(totals[1] / n, 3),
            "trap_above_answer": round(totals[2] / n, 3),
            "llm_calls_per_question": round(sum(calls) / n, 2),
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(f"{strategy}: {report[strategy]}", file=sys.stderr, flush=True)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
