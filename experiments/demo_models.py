"""The demo's WordNet queries searched by two query encoders over one index (issue 48).

A query-tower adapter (``logic-gemma``) embeds documents with its base, so one index built
with the base serves both: this embeds the demo's glosses once and compares the base and
the adapter on the demo's queries (R@20, R@100 per strategy and template), without the cost
of a second index.

    python -m experiments.demo_models --index runs/demo-base --models embeddinggemma-300m,logic-gemma
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="index folder (built here if absent)")
    parser.add_argument(
        "--base", default="embeddinggemma-300m", help="model that embeds the glosses"
    )
    parser.add_argument("--models", default="embeddinggemma-300m,logic-gemma")
    parser.add_argument("--strategies", default="vanilla,rerank")
    parser.add_argument("--per-template", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from logic_rag.evals.quest.runner import evaluate_strategies
    from logic_rag.evals.wordnet_demo import load_wordnet_demo
    from logic_rag.logic_retriever import LogicRetriever

    data = load_wordnet_demo(None, per_template=args.per_template, seed=args.seed)
    index = Path(args.index)
    if not (index / "manifest.json").is_file():
        LogicRetriever.build(data.documents, model=args.base, show_progress_bar=True).save(index)
    report: dict[str, Any] = {"queries": len(data.queries)}
    strategies = tuple(args.strategies.split(","))
    for model in args.models.split(","):
        retriever = LogicRetriever.load(index, model=model)
        results = evaluate_strategies(
            retriever, data.queries, strategies, atom_sets=dict(data.categories), progress=False
        )
        report[model] = {
            s: {
                "overall": {k: round(v, 4) for k, v in r["all"].items() if k.startswith("R@")},
                "by_template": {
                    t: round(m.get("R@20", float("nan")), 4)
                    for t, m in (r.get("by_template") or {}).items()
                },
            }
            for s, r in results.items()
        }
        print(json.dumps({model: report[model]}), flush=True)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
