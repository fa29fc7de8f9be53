"""Does entailment tuning help? Base vs base+entailment tuning, same contrastive fine-tune.

Why this design: the paper's claim is that entailment tuning is a better *starting
point* for ordinary contrastive training. So both arms get the identical short
contrastive fine-tune (sentence-transformers ``SentenceTransformerTrainer`` with
``MultipleNegativesRankingLoss``, same pairs, seed and steps) on the *train* side of the
fixed MS MARCO query split, and are evaluated on the *test* side (never seen by either
entailment tuning or the contrastive step) with R@1, R@5 (top-k accuracy), MRR@10, nDCG@10 and recall@100 computed by
ir-measures over the whole 5,000-passage corpus. An NLI probe on SNLI test (mean cosine
premise<->hypothesis per gold label) shows whether the embedding space separates
entailment from contradiction better, before and after each step.

The MS MARCO subset has only 43 judged queries (about 13 on the test side), so retrieval
differences of a few points are within noise; the report says how many queries it used,
and counts per test query whether the entailment-tuned arm ranked the first relevant
passage higher, lower or the same (reciprocal rank at 10).

``--run-tuning`` runs the entailment tuning first (into ``<out>/entailment_tuned``, with
its own defaults) so that one command gives the whole pipeline; otherwise pass
``--tuned-model DIR``. Wall-clock and CPU seconds of every phase go into the report, so the
cost on a shared machine can be told apart from the cost on a quiet one.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ExperimentArgs", "nli_probe", "rank_corpus", "score_run", "evaluate_retrieval"]
__all__ += ["compare_arms", "contrastive_finetune", "render_report", "run_experiment", "main"]

#: ir-measures names. Binary measures count TREC-DL grades >= 2 as relevant (grade 1 is
#: "related", not an answer; the contrastive pairs use the same threshold). "R@k" in the
#: paper (as in DPR) is top-k retrieval accuracy: is any relevant passage in the top k,
#: i.e. ``Success@k``; plain recall R@k is meaningless here because test queries have 3 to
#: 200 relevant passages, so R@100 is reported as the recall measure instead.
MEASURES = ("Success(rel=2)@1", "Success(rel=2)@5", "RR(rel=2)@10", "nDCG@10", "R(rel=2)@100")
#: Column names of :data:`MEASURES` in the report.
DISPLAY = {
    "Success(rel=2)@1": "R@1 (top-1 acc.)",
    "Success(rel=2)@5": "R@5 (top-5 acc.)",
    "RR(rel=2)@10": "MRR@10",
    "nDCG@10": "nDCG@10",
    "R(rel=2)@100": "recall@100",
}
_PER_QUERY = "RR(rel=2)@10"


@dataclass
class ExperimentArgs:
    """Arguments of the comparison; every field is a ``--flag`` of :func:`main`."""

    out: str
    tuned_model: str | None = None
    run_tuning: bool = False
    base_model: str = "minilm"
    contrastive_steps: int = 40
    contrastive_batch_size: int = 16
    contrastive_lr: float = 2e-5
    probe_per_label: int = 200
    corpus_limit: int | None = None
    test_fraction: float = 0.3
    seed: int = 42
    data_dir: str | None = None


def _data_dir(args: ExperimentArgs) -> Path:
    from logic_rag.paths import shared_data_dir

    return Path(args.data_dir) if args.data_dir else shared_data_dir()


def nli_probe(model: Any, pairs: Sequence[Any]) -> dict[str, float]:
    """Mean cosine similarity premise <-> hypothesis per gold label, and the gap E - C.

    This is the quantity of the paper's Figure 3: an encoder that has learned entailment
    should place entailed hypotheses closer to their premise than neutral ones, and those
    closer than contradicting ones. Keys: ``<label>`` (mean), ``<label>_std`` (population
    standard deviation), ``<label>_n`` and ``entailment_minus_contradiction``.
    """
    import torch

    premises = model.encode([p.premise for p in pairs], convert_to_tensor=True, batch_size=64)
    hyps = model.encode([p.hypothesis for p in pairs], convert_to_tensor=True, batch_size=64)
    cos = torch.nn.functional.cosine_similarity(premises, hyps, dim=1).tolist()
    by_label: dict[str, list[float]] = {}
    for pair, c in zip(pairs, cos, strict=True):
        by_label.setdefault(pair.label, []).append(c)
    result: dict[str, float] = {}
    for label, values in sorted(by_label.items()):
        mean = sum(values) / len(values)
        result[label] = mean
        result[f"{label}_std"] = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        result[f"{label}_n"] = len(values)
    if "entailment" in result and "contradiction" in result:
        result["entailment_minus_contradiction"] = result["entailment"] - result["contradiction"]
    return result


def rank_corpus(
    model: Any, corpus: dict[str, str], queries: dict[str, str], *, k: int = 100
) -> list[Any]:
    """Exhaustive dense retrieval (cosine): the top ``k`` passages per query as a run."""
    import ir_measures
    import torch

    doc_ids = list(corpus)
    docs = model.encode([corpus[d] for d in doc_ids], convert_to_tensor=True, batch_size=64)
    qids = list(queries)
    qs = model.encode([queries[q] for q in qids], convert_to_tensor=True, batch_size=64)
    top = torch.topk(qs @ docs.T, k=min(k, len(doc_ids)), dim=1)
    return [
        ir_measures.ScoredDoc(qid, doc_ids[j], float(s))
        for qid, idx, sc in zip(qids, top.indices.tolist(), top.values.tolist(), strict=True)
        for j, s in zip(idx, sc, strict=True)
    ]


def score_run(
    run: list[Any], queries: dict[str, str], qrels: dict[str, dict[str, int]]
) -> tuple[dict[str, float], dict[str, float]]:
    """ir-measures aggregates of :data:`MEASURES` and RR@10 per query (0 if none found)."""
    import ir_measures

    judged = [ir_measures.Qrel(q, d, g) for q in queries for d, g in qrels.get(q, {}).items()]
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    agg = ir_measures.calc_aggregate(measures, judged, run)
    rr = {q: 0.0 for q in queries}
    for m in ir_measures.iter_calc([ir_measures.parse_measure(_PER_QUERY)], judged, run):
        rr[m.query_id] = float(m.value)
    return {str(m): float(agg[m]) for m in measures}, rr


def evaluate_retrieval(
    model: Any,
    corpus: dict[str, str],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
) -> dict[str, float]:
    """Aggregates of :data:`MEASURES` (top-k accuracy, MRR@10, nDCG@10, recall@100)."""
    return score_run(rank_corpus(model, corpus, queries), queries, qrels)[0]


def compare_arms(a: dict[str, float], b: dict[str, float]) -> dict[str, int]:
    """Per-query wins / ties / losses of arm ``b`` over arm ``a`` (same query ids)."""
    if set(a) != set(b):
        raise ValueError("both arms must be scored on the same queries")
    wins = sum(b[q] > a[q] + 1e-12 for q in a)
    losses = sum(b[q] < a[q] - 1e-12 for q in a)
    return {"wins": wins, "ties": len(a) - wins - losses, "losses": losses}


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class _Clock:
    """Wall and CPU seconds of named phases (CPU time is what a quiet machine would need)."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = {}
        self._wall0, self._cpu0 = time.monotonic(), _cpu_seconds()

    def lap(self, name: str) -> None:
        wall, cpu = time.monotonic(), _cpu_seconds()
        self.phases[name] = {
            "wall_s": round(wall - self._wall0, 1),
            "cpu_s": round(cpu - self._cpu0, 1),
        }
        self._wall0, self._cpu0 = wall, cpu

    def total(self) -> dict[str, float]:
        return {
            "wall_s": round(sum(p["wall_s"] for p in self.phases.values()), 1),
            "cpu_s": round(sum(p["cpu_s"] for p in self.phases.values()), 1),
        }


def contrastive_finetune(
    model_path: str, pairs: list[tuple[str, str]], out_dir: Path, args: ExperimentArgs
) -> Any:
    """Short MNRL fine-tune with in-batch negatives; returns the trained SentenceTransformer."""
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    model = SentenceTransformer(model_path, device="cuda" if torch.cuda.is_available() else "cpu")
    data = Dataset.from_dict({"anchor": [q for q, _ in pairs], "positive": [p for _, p in pairs]})
    targs = SentenceTransformerTrainingArguments(
        output_dir=str(out_dir),
        max_steps=args.contrastive_steps,
        per_device_train_batch_size=args.contrastive_batch_size,
        learning_rate=args.contrastive_lr,
        warmup_steps=max(1, args.contrastive_steps // 10),
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
        disable_tqdm=True,
        dataloader_pin_memory=False,
    )
    trainer = SentenceTransformerTrainer(
        model=model, args=targs, train_dataset=data, loss=MultipleNegativesRankingLoss(model)
    )
    trainer.train()
    return model


def _probe_pairs(data: Path, per_label: int, seed: int) -> list[Any]:
    from logic_rag.finetune.entailment.data import load_snli

    pairs = load_snli(data / "nli" / "snli_test.jsonl", entailment_only=False)
    rng = random.Random(seed)
    chosen = []
    for label in ("entailment", "neutral", "contradiction"):
        group = [p for p in pairs if p.label == label]
        chosen += rng.sample(group, min(per_label, len(group)))
    return chosen


def _resolve_tuned(args: ExperimentArgs, out: Path) -> str:
    """The entailment-tuned model folder: given, or produced here with ``--run-tuning``."""
    from logic_rag.finetune.entailment.train import resolve_tuned_model

    return resolve_tuned_model(
        args.tuned_model,
        args.run_tuning,
        out,
        base_model=args.base_model,
        seed=args.seed,
        data_dir=args.data_dir,
        test_fraction=args.test_fraction,
    )


def run_experiment(args: ExperimentArgs) -> dict[str, Any]:
    """Run both arms; writes ``<out>/results.json`` and ``<out>/report.md`` and returns the
    results."""
    from sentence_transformers import SentenceTransformer

    from logic_rag.atomic import atomic_write_json, atomic_write_text
    from logic_rag.finetune.entailment.data import (
        load_beir_corpus,
        load_beir_qrels,
        load_beir_queries,
        split_queries,
    )
    from logic_rag.models import resolve_model

    clock = _Clock()
    out = Path(args.out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    data = _data_dir(args)
    beir = data / "beir" / "msmarco"
    corpus = load_beir_corpus(beir / "corpus.jsonl")
    queries = load_beir_queries(beir / "queries.jsonl")
    qrels = load_beir_qrels(beir / "qrels" / "test.tsv")
    train_q, test_q = split_queries(
        [q for q in qrels if q in queries], test_fraction=args.test_fraction
    )
    train_pairs = [
        (queries[q], corpus[d])
        for q in train_q
        for d, g in sorted(qrels[q].items())
        if g >= 2 and d in corpus
    ]
    if args.corpus_limit is not None and args.corpus_limit < len(corpus):
        keep = {d for q in test_q for d in qrels[q] if d in corpus}
        rest = sorted(set(corpus) - keep)
        random.Random(args.seed).shuffle(rest)
        keep |= set(rest[: max(0, args.corpus_limit - len(keep))])
        corpus = {d: corpus[d] for d in sorted(keep)}
    test_queries = {q: queries[q] for q in test_q}
    random.Random(args.seed).shuffle(train_pairs)
    probe = _probe_pairs(data, args.probe_per_label, args.seed)
    base_path = str(resolve_model(args.base_model).path)
    clock.lap("load_data")

    tuned_path = _resolve_tuned(args, out)
    if args.run_tuning:
        clock.lap("entailment_tuning")

    arms: dict[str, Any] = {}
    per_query: dict[str, dict[str, float]] = {}
    for name, path in (("base", base_path), ("entailment_tuned", tuned_path)):
        start = SentenceTransformer(path, device="cpu")
        arm: dict[str, Any] = {"model": path, "nli_probe_start": nli_probe(start, probe)}
        arm["retrieval_start"] = score_run(
            rank_corpus(start, corpus, test_queries), test_queries, qrels
        )[0]
        with tempfile.TemporaryDirectory(prefix=f"contrastive-{name}-", dir=out) as tmp:
            tuned = contrastive_finetune(path, train_pairs, Path(tmp), args)
        arm["nli_probe_after_contrastive"] = nli_probe(tuned, probe)
        agg, rr = score_run(rank_corpus(tuned, corpus, test_queries), test_queries, qrels)
        arm["retrieval_after_contrastive"] = agg
        arm["rr10_per_query_after_contrastive"] = rr
        per_query[name] = rr
        arms[name] = arm
        clock.lap(f"arm_{name}")

    results = {
        "arms": arms,
        "comparison": {
            "entailment_tuned_vs_base_after_contrastive_rr10": compare_arms(
                per_query["base"], per_query["entailment_tuned"]
            )
        },
        "data": {
            "train_queries": len(train_q),
            "test_queries": len(test_q),
            "contrastive_pairs": len(train_pairs),
            "corpus": len(corpus),
            "probe_pairs": len(probe),
        },
        "args": dataclasses.asdict(args),
        "timing": {"phases": clock.phases, "total": clock.total()},
        "seconds": clock.total()["wall_s"],
    }
    tuning_report = Path(tuned_path) / "entailment_tuning.json"
    if tuning_report.is_file():
        tuning = json.loads(tuning_report.read_text(encoding="utf-8"))
        results["entailment_tuning"] = {
            k: tuning.get(k) for k in ("pairs", "head_warmup", "seconds", "cpu_seconds")
        }
        results["entailment_tuning"]["tuning"] = {
            k: v for k, v in tuning.get("tuning", {}).items() if k != "log"
        }
    atomic_write_json(out / "results.json", results)
    atomic_write_text(out / "report.md", render_report(results))
    return results


def _fmt(x: Any, digits: int = 4) -> str:
    return f"{x:.{digits}f}" if isinstance(x, (int, float)) else "-"


def render_report(results: dict[str, Any]) -> str:
    """Markdown report: retrieval table, NLI probe table (Figure 3), timing, caveats."""
    d = results["data"]
    arms = results["arms"]
    label = {"base": "base", "entailment_tuned": "base + ET"}
    lines = [
        "# Entailment tuning: base vs base + entailment tuning (ET), same contrastive FT",
        "",
        f"MS MARCO subset split by query: {d['train_queries']} train queries "
        f"({d['contrastive_pairs']} contrastive pairs), **{d['test_queries']} test queries**, "
        f"corpus {d['corpus']} passages. NLI probe: {d['probe_pairs']} SNLI-test pairs.",
        "",
        "## Retrieval on the test queries",
        "",
        "| model | " + " | ".join(DISPLAY[m] for m in MEASURES) + " |",
        "|---" * (len(MEASURES) + 1) + "|",
    ]
    for stage, suffix in (("start", ""), ("after_contrastive", " + FT")):
        for name, arm in arms.items():
            r = arm[f"retrieval_{stage}"]
            cells = " | ".join(_fmt(r[m]) for m in MEASURES)
            lines.append(f"| {label.get(name, name)}{suffix} | {cells} |")
    cmp_ = results.get("comparison", {}).get("entailment_tuned_vs_base_after_contrastive_rr10")
    if cmp_:
        lines += [
            "",
            f"Per test query (MRR@10, base + ET + FT vs base + FT): {cmp_['wins']} better, "
            f"{cmp_['ties']} equal, {cmp_['losses']} worse. With {d['test_queries']} queries "
            "one query moves MRR@10 by up to "
            f"{1 / max(d['test_queries'], 1):.3f}: differences of that size are noise.",
        ]
    lines += [
        "",
        "R@k is top-k accuracy (any passage of grade >= 2 in the top k), as in the paper; "
        "all binary measures count grades >= 2; nDCG@10 uses the grades.",
        "",
        "## NLI probe (paper's Figure 3): mean cosine premise <-> hypothesis",
        "",
        "| model | entailment | neutral | contradiction | E - C |",
        "|---|---|---|---|---|",
    ]
    for stage, suffix in (("start", ""), ("after_contrastive", " + FT")):
        for name, arm in arms.items():
            p = arm[f"nli_probe_{stage}"]
            cells = " | ".join(
                f"{_fmt(p.get(k), 3)} ± {_fmt(p.get(k + '_std'), 3)}"
                for k in ("entailment", "neutral", "contradiction")
            )
            gap = _fmt(p.get("entailment_minus_contradiction"), 3)
            lines.append(f"| {label.get(name, name)}{suffix} | {cells} | {gap} |")
    et = results.get("entailment_tuning")
    if et:
        warm, tun = et.get("head_warmup") or {}, et.get("tuning") or {}
        lines += [
            "",
            "## Entailment tuning run",
            "",
            f"Pairs: {et.get('pairs')}. MLM-head warm-up loss "
            f"{_fmt(warm.get('mlm_loss_before'), 2)} -> {_fmt(warm.get('mlm_loss_after'), 2)}; "
            f"masked-hypothesis loss {_fmt(tun.get('masked_hypothesis_loss_before'), 2)} -> "
            f"{_fmt(tun.get('masked_hypothesis_loss_after'), 2)} over {tun.get('steps')} steps.",
        ]
    t = results.get("timing")
    if t:
        lines += ["", "## Cost", "", "| phase | wall s | CPU s |", "|---|---|---|"]
        for name, ph in {**t["phases"], "total": t["total"]}.items():
            lines.append(f"| {name} | {ph['wall_s']} | {ph['cpu_s']} |")
        lines += [
            "",
            "CPU seconds / 2 estimates the wall time on a quiet 2-core machine "
            f"({t['total']['cpu_s'] / 2 / 60:.1f} min here).",
        ]
    lines += ["", "Arguments: `" + json.dumps(results["args"], sort_keys=True) + "`", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m experiments.entailment --out DIR [...]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    defaults = ExperimentArgs(out="")
    for f in dataclasses.fields(ExperimentArgs):
        flag = "--" + f.name.replace("_", "-")
        if f.name == "out":
            parser.add_argument(flag, required=True)
            continue
        if str(f.type) == "bool":
            parser.add_argument(flag, action="store_true", default=False)
            continue
        kind = {"int": int, "float": float, "int | None": int}.get(str(f.type), str)
        parser.add_argument(flag, type=kind, default=getattr(defaults, f.name))
    args = ExperimentArgs(**vars(parser.parse_args(argv)))
    try:
        results = run_experiment(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(results["data"]))
    print(render_report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
