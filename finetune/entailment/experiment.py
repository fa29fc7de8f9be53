"""Does entailment tuning help? Base vs base+entailment tuning, same contrastive fine-tune.

Why this design: the paper's claim is that entailment tuning is a better *starting
point* for ordinary contrastive training. So both arms get the identical short
contrastive fine-tune (sentence-transformers ``SentenceTransformerTrainer`` with
``MultipleNegativesRankingLoss``, same pairs, seed and steps) on the *train* side of the
fixed MS MARCO query split, and are evaluated on the *test* side (never seen by either
entailment tuning or the contrastive step) with R@1, R@5, MRR@10 and nDCG@10 computed by
ir-measures over the whole 5,000-passage corpus. An NLI probe on SNLI test (mean cosine
premise<->hypothesis per gold label) shows whether the embedding space separates
entailment from contradiction better, before and after each step.

The MS MARCO subset has only 43 judged queries (about 13 on the test side), so retrieval
differences of a few points are within noise; the report says how many queries it used.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ExperimentArgs", "nli_probe", "evaluate_retrieval", "contrastive_finetune"]
__all__ += ["run_experiment", "main"]

MEASURES = ("R@1", "R@5", "RR@10", "nDCG@10")


@dataclass
class ExperimentArgs:
    """Arguments of the comparison; every field is a ``--flag`` of :func:`main`."""

    out: str
    tuned_model: str | None = None
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
    """Mean cosine similarity premise <-> hypothesis per gold label, and the gap E - C."""
    import torch

    premises = model.encode([p.premise for p in pairs], convert_to_tensor=True, batch_size=64)
    hyps = model.encode([p.hypothesis for p in pairs], convert_to_tensor=True, batch_size=64)
    cos = torch.nn.functional.cosine_similarity(premises, hyps, dim=1).tolist()
    by_label: dict[str, list[float]] = {}
    for pair, c in zip(pairs, cos, strict=True):
        by_label.setdefault(pair.label, []).append(c)
    result = {label: sum(v) / len(v) for label, v in sorted(by_label.items())}
    if "entailment" in result and "contradiction" in result:
        result["entailment_minus_contradiction"] = result["entailment"] - result["contradiction"]
    return result


def evaluate_retrieval(
    model: Any,
    corpus: dict[str, str],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
) -> dict[str, float]:
    """Exhaustive dense retrieval (cosine) of ``queries`` over ``corpus``; ir-measures scores."""
    import ir_measures
    import torch

    doc_ids = list(corpus)
    docs = model.encode([corpus[d] for d in doc_ids], convert_to_tensor=True, batch_size=64)
    qids = list(queries)
    qs = model.encode([queries[q] for q in qids], convert_to_tensor=True, batch_size=64)
    scores = qs @ docs.T
    top = torch.topk(scores, k=min(100, len(doc_ids)), dim=1)
    run = [
        ir_measures.ScoredDoc(qid, doc_ids[j], float(s))
        for qid, idx, sc in zip(qids, top.indices.tolist(), top.values.tolist(), strict=True)
        for j, s in zip(idx, sc, strict=True)
    ]
    judged = [ir_measures.Qrel(q, d, g) for q in qids for d, g in qrels.get(q, {}).items()]
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    agg = ir_measures.calc_aggregate(measures, judged, run)
    return {str(m): float(agg[m]) for m in measures}


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


def run_experiment(args: ExperimentArgs) -> dict[str, Any]:
    """Run both arms; writes ``<out>/results.json`` and returns it."""
    from sentence_transformers import SentenceTransformer

    from logic_rag.atomic import atomic_write_json
    from logic_rag.finetune.entailment.data import (
        load_beir_corpus,
        load_beir_qrels,
        load_beir_queries,
        split_queries,
    )
    from logic_rag.finetune.entailment.train import EntailmentTuningArgs, run_entailment_tuning
    from logic_rag.models import resolve_model

    started = time.monotonic()
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
    tuned_path = args.tuned_model
    if tuned_path is None:
        tuned_path = str(out / "entailment_tuned")
        if not Path(tuned_path).is_dir():
            run_entailment_tuning(
                EntailmentTuningArgs(
                    out=tuned_path,
                    base_model=args.base_model,
                    seed=args.seed,
                    data_dir=args.data_dir,
                    test_fraction=args.test_fraction,
                )
            )

    arms: dict[str, Any] = {}
    for name, path in (("base", base_path), ("entailment_tuned", tuned_path)):
        start = SentenceTransformer(path, device="cpu")
        arm: dict[str, Any] = {"model": path, "nli_probe_start": nli_probe(start, probe)}
        arm["retrieval_start"] = evaluate_retrieval(start, corpus, test_queries, qrels)
        with tempfile.TemporaryDirectory(prefix=f"contrastive-{name}-", dir=out) as tmp:
            tuned = contrastive_finetune(path, train_pairs, Path(tmp), args)
        arm["nli_probe_after_contrastive"] = nli_probe(tuned, probe)
        arm["retrieval_after_contrastive"] = evaluate_retrieval(tuned, corpus, test_queries, qrels)
        arms[name] = arm

    results = {
        "arms": arms,
        "data": {
            "train_queries": len(train_q),
            "test_queries": len(test_q),
            "contrastive_pairs": len(train_pairs),
            "corpus": len(corpus),
            "probe_pairs": len(probe),
        },
        "args": dataclasses.asdict(args),
        "seconds": round(time.monotonic() - started, 1),
    }
    atomic_write_json(out / "results.json", results)
    return results


def _table(results: dict[str, Any]) -> str:
    lines = ["arm                stage        " + "  ".join(f"{m:>8}" for m in MEASURES)]
    lines[0] += "   cos E / N / C"
    for name, arm in results["arms"].items():
        for stage in ("start", "after_contrastive"):
            ret = arm[f"retrieval_{stage}"]
            probe = arm[f"nli_probe_{stage}"]
            cos = " / ".join(
                f"{probe.get(k, float('nan')):.3f}"
                for k in ("entailment", "neutral", "contradiction")
            )
            row = f"{name:<18} {stage[:12]:<12} " + "  ".join(f"{ret[m]:8.4f}" for m in MEASURES)
            lines.append(row + f"   {cos}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m logic_rag.finetune.entailment.experiment --out DIR [...]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    defaults = ExperimentArgs(out="")
    for f in dataclasses.fields(ExperimentArgs):
        flag = "--" + f.name.replace("_", "-")
        if f.name == "out":
            parser.add_argument(flag, required=True)
            continue
        kind = {"int": int, "float": float, "int | None": int}.get(str(f.type), str)
        parser.add_argument(flag, type=kind, default=getattr(defaults, f.name))
    args = ExperimentArgs(**vars(parser.parse_args(argv)))
    results = run_experiment(args)
    print(json.dumps(results["data"]))
    print(_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
