"""Quality mode on QUEST-attr: fit the cascade on train, then R@20 against LLM calls on dev.

Reproduces the quality-mode tables of ``docs/experiments/2026-11-27-quality-mode.md``::

    python experiments/quality_curve.py --index runs/quest-gemma \\
        --train runs/split/train.jsonl --dev runs/split/dev.jsonl --out runs/quality

1. ``fit``: the cascade's sample is labelled by the LLM on the *train* queries' pairs
   (``logic-rag fit-cascade``), once, saved to ``OUT/cascade.json``.
2. ``plan``: for each cut and target, the pairs the fitted bands leave open per train
   query (an upper bound on LLM calls, no model run), to choose the cut on train.
3. ``curve``: ``quality`` on dev at each target, in the order given; one LLM verifier
   object serves every target, so pairs an earlier target asked are not asked again:
   calls are counted per target as the cascade asks them, seconds are measured for the
   first target only (later ones reuse answers, see ``seconds_note`` in the output).
4. ``check``: for ``--check-queries`` dev queries, the LLM labels every eligible pair
   (the all-pairs reference) and each target's result set is compared with it: the share
   of queries whose result set kept at least the stated recall.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

TARGETS = "0.8:0.6,0.7:0.5,0.9:0.9"


def _load(args: argparse.Namespace) -> tuple[Any, Any]:
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.llm import LLMVerifier

    retriever = LogicRetriever.load(args.index)
    verifier = LLMVerifier(generator=args.llm)
    return retriever, verifier


def _targets(args: argparse.Namespace) -> list[tuple[float, float]]:
    """``recall:precision`` pairs (a lone number is both)."""
    out = []
    for item in args.targets.split(","):
        recall, _, precision = item.partition(":")
        out.append((float(recall), float(precision or recall)))
    return out


def _config(
    retriever: Any, verifier: Any, args: argparse.Namespace, target: tuple[float, float]
) -> Any:
    return retriever.with_config(
        verifier=verifier,
        quality_top=args.top,
        quality_recall=target[0],
        quality_precision=target[1],
        quality_delta=args.delta,
        quality_thresholds=str(Path(args.out) / "cascade.json"),
        quality_sample=args.sample,
    )


def _queries(path: str) -> list[Any]:
    from logic_rag.evals.quest.data import load_quest_queries

    return load_quest_queries(Path(path))


def _subsample(queries: list[Any], args: argparse.Namespace) -> list[Any]:
    """Every ``--every``-th query, or the first ``--per-template`` of each template (in
    file order): fixed before any result is seen."""
    if args.per_template:
        seen: dict[str, int] = {}
        kept = []
        for q in queries:
            if seen.get(q.template, 0) < args.per_template:
                seen[q.template] = seen.get(q.template, 0) + 1
                kept.append(q)
        return kept
    return queries[:: args.every]


def fit(retriever: Any, verifier: Any, args: argparse.Namespace) -> dict[str, Any]:
    from logic_rag.verifiers.cascade import fit_cascade

    out = Path(args.out) / "cascade.json"
    if out.is_file():
        return {"fit": "reused", "path": str(out)}
    started = time.perf_counter()
    train = [q.query for q in _queries(args.train)]
    fitted = fit_cascade(_config(retriever, verifier, args, (0.9, 0.9)), train, out)
    return {
        "fit": "new",
        "pairs_labelled": len(fitted.sample),
        "seconds": round(time.perf_counter() - started, 1),
        "llm": verifier.stats(),
    }


def plan(retriever: Any, verifier: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Open pairs per train query for each cut and target, from the fitted bands alone."""
    from logic_rag.compose.kleene import atom_requirements
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.pipeline.stage import Pipeline
    from logic_rag.pipeline.state import QueryState, SearchBatch
    from logic_rag.verifiers.cascade import CascadeVerify
    from logic_rag.verifiers.thresholds import CascadeThresholds

    thresholds = CascadeThresholds.load(Path(args.out) / "cascade.json")
    train = [q.query for q in _queries(args.train)]
    rows = []
    for top in [int(t) if t != "all" else None for t in args.plan_tops.split(",")]:
        for target in _targets(args):
            config = _config(retriever, verifier, args, target).with_config(quality_top=top)
            stages = list(config.pipeline("quality"))
            at = next(i for i, s in enumerate(stages) if isinstance(s, CascadeVerify))
            batch = SearchBatch([QueryState(p) for p in config.plan(train)], k=20)
            Pipeline(stages[:at])(batch, SearchContext(config.resources))
            opened, every = [], []
            for state in batch:
                negated = state.plan.negated
                needs = atom_requirements(state.plan.logic, target[0])
                rows_ = [i for i, a in enumerate(state.plan.atoms) if a not in negated]
                delta = args.delta / max(1, len(rows_))
                n_open = 0
                for r in rows_:
                    atom = state.plan.atoms[r]
                    band = thresholds.band(
                        positive=True,
                        recall=needs.get((atom.text, True), target[0]),
                        precision=target[1],
                        delta=delta,
                    )
                    n_open += int((band.decide(state.probs[r]) == -1).sum())
                opened.append(n_open)
                every.append(len(rows_) * len(state.candidates))
            rows.append(
                {
                    "top": top or "all",
                    "target": list(target),
                    "open_pairs_mean": round(float(np.mean(opened)), 1),
                    "pairs_mean": round(float(np.mean(every)), 1),
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def curve(retriever: Any, verifier: Any, args: argparse.Namespace) -> dict[str, Any]:
    from logic_rag.evals.quest.runner import evaluate_strategies

    everything = _subsample(_queries(args.dev), args)
    limits = [int(v) for v in args.limits.split(",")] if args.limits else []
    out: dict[str, Any] = {}
    for i, target in enumerate(_targets(args)):
        limit = limits[i] if i < len(limits) else 0
        dev = everything[:limit] if limit else everything
        config = _config(retriever, verifier, args, target)
        before = verifier.stats()
        result = evaluate_strategies(config, dev, ["quality"], depth=100)["quality"]
        after = verifier.stats()
        out[f"{target[0]}:{target[1]}"] = {
            "queries": len(dev),
            "R@20": result["all"]["R@20"],
            "by_template": {t: b["R@20"] for t, b in result["by_template"].items()},
            "costs": result["costs"],
            "llm_pairs_scored": after.get("pairs", 0) - before.get("pairs", 0),
            "seconds_note": "measured" if i == 0 else "answers of earlier targets reused",
            "per_query": {
                qid: {"R@20": row["R@20"], **row.get("costs", {})}
                for qid, row in result["per_query"].items()
            },
        }
        shown = {k: v for k, v in out[f"{target[0]}:{target[1]}"].items() if k != "per_query"}
        print(json.dumps(shown), file=sys.stderr)
        # Written after every target, so a long run leaves what it has measured.
        (Path(args.out) / "curve.json").write_text(json.dumps(out, indent=2))
    return out


def check(retriever: Any, verifier: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Each target's result set against the all-pairs LLM result set, per query."""
    from logic_rag.compose.kleene import TRUE, kleene_truth
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.pipeline.state import QueryState, SearchBatch
    from logic_rag.verifiers.base import CheckRequest

    dev = _subsample(_queries(args.dev), args)[: args.check_queries]
    out: dict[str, Any] = {}
    for target in _targets(args):
        config = _config(retriever, verifier, args, target)
        met, recalls = 0, []
        for q in dev:
            state = QueryState(config.plan([q.query])[0])
            batch = SearchBatch([state], k=20)
            ctx = SearchContext(config.resources)
            config.pipeline("quality")(batch, ctx)
            rows, values = state.trace["cascade_values"]
            atoms = state.plan.atoms
            cand = state.candidates
            # The reference: the LLM on every eligible pair of the same candidates.
            reference = values.copy()
            if rows:
                checked = verifier.check(
                    [CheckRequest(tuple(atoms[r].text for r in rows), cand)], ctx
                )[0]
                reference[rows] = np.where(checked.probs >= 0.5, 1, 0)
            cheap = (state.probs >= 0.5).astype(np.int8)  # atoms the LLM never checks
            others = [i for i in range(len(atoms)) if i not in rows]
            reference[others] = cheap[others]
            got = values.copy()
            got[others] = cheap[others]
            truth = {a.text: reference[i] for i, a in enumerate(atoms)}
            want = kleene_truth(state.plan.logic, truth) == TRUE
            have = kleene_truth(state.plan.logic, {a.text: got[i] for i, a in enumerate(atoms)})
            if want.sum() == 0:
                continue
            recall = float((have[want] == TRUE).mean())
            recalls.append(recall)
            met += recall >= target[0]
        out[f"{target[0]}:{target[1]}"] = {
            "queries": len(recalls),
            "met_share": round(met / len(recalls), 3) if recalls else None,
            "recall_mean": round(float(np.mean(recalls)), 4) if recalls else None,
            "recall_min": round(float(np.min(recalls)), 4) if recalls else None,
        }
        print(
            json.dumps({f"{target[0]}:{target[1]}": out[f"{target[0]}:{target[1]}"]}),
            file=sys.stderr,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--index", required=True)
    p.add_argument("--train", required=True)
    p.add_argument("--dev", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--llm", default="qwen2.5-1.5b", help="generator spec of the LLM verifier")
    p.add_argument("--targets", default=TARGETS, help="recall:precision targets, in order")
    p.add_argument("--delta", type=float, default=0.1)
    p.add_argument("--sample", type=int, default=400, help="pairs the LLM labels to fit")
    p.add_argument("--top", type=int, default=40, help="Cutoff before the cascade (0: none)")
    p.add_argument("--plan-tops", default="40,60,100,all")
    p.add_argument("--steps", default="fit,plan,curve,check")
    p.add_argument("--limits", default="", help="dev queries per target, e.g. 0,0,20 (0: all)")
    p.add_argument("--check-queries", type=int, default=12)
    p.add_argument("--every", type=int, default=1, help="every Nth dev query (a fixed subsample)")
    p.add_argument(
        "--per-template", type=int, default=0, help="the first N dev queries per template"
    )
    args = p.parse_args(argv)
    args.top = args.top or None
    Path(args.out).mkdir(parents=True, exist_ok=True)
    retriever, verifier = _load(args)
    report: dict[str, Any] = {"args": vars(args)}
    steps = {"fit": fit, "plan": plan, "curve": curve, "check": check}
    for step in args.steps.split(","):
        report[step] = steps[step](retriever, verifier, args)
        path = Path(args.out) / f"{step}.json"
        path.write_text(json.dumps(report[step], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
