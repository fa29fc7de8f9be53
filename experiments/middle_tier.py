"""Could a smaller LLM be the cascade's middle tier? Agreement with the big one, and cost.

On the (atom, page) pairs that ``quality`` would consider for a few dev queries (the
embedding evidence's top 40 candidates, positive atoms), score every pair with the big
LLM (the reference), the small one and the embedding evidence, and report each cheap
scorer's ROC AUC against the big LLM's yes/no verdicts, and seconds per pair::

    python experiments/middle_tier.py --index runs/quest-gemma --dev runs/split/dev.jsonl \\
        --queries 6 --out runs/middle-tier.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    from sklearn.metrics import roc_auc_score

    from logic_rag.evals.quest.data import load_quest_queries
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.pipeline.state import QueryState, SearchBatch
    from logic_rag.verifiers.base import CheckRequest
    from logic_rag.verifiers.certified import CertifiedTopK
    from logic_rag.verifiers.llm import LLMVerifier

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--index", required=True)
    p.add_argument("--dev", required=True)
    p.add_argument("--queries", type=int, default=6)
    p.add_argument("--big", default="qwen2.5-1.5b")
    p.add_argument("--small", default="qwen2.5-0.5b")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)

    retriever = LogicRetriever.load(args.index)
    queries = [q.query for q in load_quest_queries(Path(args.dev))[: args.queries]]
    before, _costly = retriever.pipeline("quality").until(CertifiedTopK)
    batch = SearchBatch([QueryState(p) for p in retriever.plan(queries)], k=20)
    ctx = SearchContext(retriever.resources)
    before(batch, ctx)
    requests, cheap = [], []
    for state in batch:
        rows = [i for i, a in enumerate(state.plan.atoms) if a not in state.plan.negated]
        for r in rows:
            requests.append(CheckRequest((state.plan.atoms[r].text,), state.candidates))
            cheap.append(state.probs[r])
    embedding = np.concatenate(cheap)
    out: dict[str, object] = {"queries": len(queries), "pairs": int(len(embedding))}
    scores = {}
    for name, spec in (("big", args.big), ("small", args.small)):
        verifier = LLMVerifier(generator=spec)
        verifier.warm_up()
        began = time.perf_counter()
        checked = verifier.check(requests, ctx)
        seconds = time.perf_counter() - began
        scores[name] = np.concatenate([c.probs[0] for c in checked])
        out[f"{name}_model"] = spec
        out[f"{name}_seconds_per_pair"] = round(seconds / len(embedding), 3)
    truth = scores["big"] >= 0.5
    out["big_yes_share"] = round(float(truth.mean()), 3)
    if 0 < truth.sum() < len(truth):
        out["auc_embedding_vs_big"] = round(float(roc_auc_score(truth, embedding)), 4)
        out["auc_small_vs_big"] = round(float(roc_auc_score(truth, scores["small"])), 4)
    out["agreement_small_vs_big"] = round(float(((scores["small"] >= 0.5) == truth).mean()), 4)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
