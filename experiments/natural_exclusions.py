"""Before/after driver for docs/experiments/2026-11-27-natural-exclusions.md.

Builds one LogicRetriever over a BEIR folder and searches it twice, once with the rule
decomposer of an older commit and once with the working tree's, so the index and every
other stage are identical and only the decomposition differs. Prints JSON: per decomposer,
how many queries hold a NOT and the metrics of each strategy (trap metrics when the folder
has traps.tsv, nDCG@10 / RR@10 through ir-measures otherwise).

    git archive d1c7464 logic_rag | tar -x -C /tmp/before
    python -m experiments.natural_exclusions \\
        --data ../shared/data/negation/boolq_not --model minilm \\
        --before-rules /tmp/before/logic_rag/query/rules.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path


def _load_rules(path: Path):
    spec = importlib.util.spec_from_file_location("before_rules", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["before_rules"] = module
    spec.loader.exec_module(module)
    return module.RuleDecomposer()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--before-rules", type=Path, required=True)
    parser.add_argument("--strategies", nargs="+", default=["vanilla", "rerank"])
    args = parser.parse_args()

    import ir_measures

    from logic_rag.corpus import load_beir
    from logic_rag.evals.exclusions import read_traps, trap_metrics
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.query.algebra import negated_atoms
    from logic_rag.query.rules import RuleDecomposer

    data = load_beir(args.data, "test")
    qids = [q for q in data.queries if q in data.qrels]
    texts = [data.queries[q] for q in qids]
    traps_path = args.data / "traps.tsv"
    traps = read_traps(traps_path) if traps_path.is_file() else None
    answers = {q: [d for d, r in data.qrels[q].items() if r > 0] for q in qids}
    measures = [ir_measures.parse_measure(m) for m in ("nDCG@10", "RR@10")]

    start = time.perf_counter()
    retriever = LogicRetriever.build(data.corpus, model=args.model)
    out: dict = {
        "model": retriever.dense.encoder.name,
        "documents": len(data.corpus),
        "queries": len(qids),
        "build_seconds": round(time.perf_counter() - start, 1),
    }
    for name, decomposer in (
        ("before", _load_rules(args.before_rules)),
        ("after", RuleDecomposer()),
    ):
        retriever.decomposer = decomposer
        row: dict = {
            "with_not": sum(bool(negated_atoms(decomposer.decompose(t).query)) for t in texts)
        }
        for strategy in args.strategies:
            results = retriever.search_batch(texts, k=100, strategy=strategy)
            ranked = {q: [h.id for h in hits] for q, hits in zip(qids, results, strict=True)}
            if traps is not None:
                row[strategy] = trap_metrics(ranked, answers, traps)
            else:
                run = {
                    q: {h.id: float(h.score) for h in hits}
                    for q, hits in zip(qids, results, strict=True)
                }
                scores = ir_measures.calc_aggregate(measures, data.qrels, run)
                row[strategy] = {str(m): round(float(scores[m]), 4) for m in measures}
        out[name] = row
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
