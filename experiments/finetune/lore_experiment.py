"""LORE experiment: tune only the query encoder and search an index built before training.

LORE (Zhang et al.) trains the query encoder with a tiered contrastive loss (positives >
distractors N1 > negatives N2) while the document encoder stays frozen, so an existing
index keeps serving. This script shows exactly that: the documents are encoded *once* with
the base model into one exact index; the base query encoder and the LORE-tuned one then
search that same index. Distractors are documents that match some but not all of a
query's constraints (computed from the atoms' gold sets); the metric is their recall in
the top 3 / 5 (lower is better) next to the positives' recall (should not fall).

    python -m experiments.finetune.lore_experiment --out DIR [--quick]

Issue 5's target: distractor R@5 at least 30% lower, positive R@5 not lower.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from experiments.finetune.datasets import DatasetSpec, load_split, prepare_dataset
from experiments.finetune.metrics import mean_set_recall_at_k, relative_change
from logic_rag.atomic import atomic_write_json, atomic_write_text

__all__ = ["LoreConfig", "run_lore_experiment", "train_query_encoder", "render_report", "main"]

KS: tuple[int, ...] = (3, 5)


@dataclass(frozen=True)
class LoreConfig:
    """What decides the numbers (a resumed run must match)."""

    dataset: str = "world"
    size: int = 2000
    train_queries: int = 1000
    val_queries: int = 150
    test_queries: int = 300
    base: str = "minilm"
    max_steps: int = 150
    batch_size: int = 16
    lr: float = 5e-5  # the recipe's default (LoreArgs)
    seed: int = 0
    eval_splits: tuple[str, ...] = ("val", "test")

    def spec(self) -> DatasetSpec:
        """The data build."""
        return DatasetSpec(
            name=self.dataset,  # type: ignore[arg-type]
            size=self.size,
            train_queries=self.train_queries,
            val_queries=self.val_queries,
            test_queries=self.test_queries,
            seed=self.seed,
        )


def quick_config(cfg: LoreConfig | None = None) -> LoreConfig:
    """A few-minute version for smoke runs."""
    return replace(
        cfg or LoreConfig(),
        size=600,
        train_queries=300,
        val_queries=60,
        test_queries=100,
        max_steps=25,
        batch_size=8,
    )


def train_query_encoder(cfg: LoreConfig, data_dir: Path, out_dir: Path, training_set: Any) -> Path:
    """Train LORE with the recipe (query encoder only); returns the model folder."""
    from logic_rag.finetune.recipes import LoreArgs, train_lore

    wanted: dict[str, Any] = {
        "train": str(data_dir / "train.jsonl"),
        "docs": str(data_dir / "documents.jsonl"),
        "out": str(out_dir),
        "base": cfg.base,
        "atoms": str(data_dir / "atoms.jsonl"),
        "max_steps": cfg.max_steps,
        "batch_size": cfg.batch_size,
        "lr": cfg.lr,
        "seed": cfg.seed,
    }
    return Path(train_lore(LoreArgs(**wanted), training_set=training_set))


def _recalls(index: Any, encoder: Any, ts: Any) -> dict[str, Any]:
    vectors = encoder.encode_queries([q.text for q in ts.queries], show_progress_bar=False)
    hits = index.search(vectors, max(KS))
    rankings = {q.query_id: [d for d, _ in h] for q, h in zip(ts.queries, hits, strict=True)}
    with_distractors = [q for q in ts.queries if q.distractors]
    return {
        "distractor": mean_set_recall_at_k(
            rankings, {q.query_id: q.distractors for q in with_distractors}, KS
        ),
        "positive": mean_set_recall_at_k(
            rankings, {q.query_id: q.gold for q in with_distractors}, KS
        ),
    }


def run_lore_experiment(
    out: str | Path,
    cfg: LoreConfig,
    *,
    train_fn: Callable[..., Path] = train_query_encoder,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Index once with the base model, evaluate base vs tuned query encoder on val and test."""
    import json

    from experiments.finetune.search import DocumentIndex, load_encoder
    from logic_rag.finetune.data import load_documents_map

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    results_path = root / "results.json"
    config = asdict(cfg)
    config["eval_splits"] = list(cfg.eval_splits)  # as JSON reads it back on resume
    if results_path.is_file():
        done = json.loads(results_path.read_text(encoding="utf-8"))
        if done.get("config") != config:
            raise SystemExit(f"{results_path} has another configuration; use another --out")
        if "tuned" in done:
            log("lore: done already")
            atomic_write_text(root / "report.md", render_report(done))
            return done
    log(f"lore: {config}")
    data_dir = prepare_dataset(cfg.spec(), root / "data" / cfg.dataset)
    documents = load_documents_map(data_dir / "documents.jsonl")
    start = time.perf_counter()
    base = load_encoder(cfg.base)
    index = DocumentIndex(list(documents), list(documents.values()), base)
    splits = {s: load_split(data_dir, s) for s in cfg.eval_splits}
    results: dict[str, Any] = {
        "config": config,
        "index": {"documents": len(documents), "encoder": base.name},
        "base": {s: _recalls(index, base, ts) for s, ts in splits.items()},
    }
    results["index_wall_s"] = round(time.perf_counter() - start, 1)
    atomic_write_json(results_path, results)
    wall, cpu = time.perf_counter(), time.process_time()
    train = load_split(data_dir, "train")
    log(
        f"lore: training on {len(train.queries)} queries "
        f"({sum(bool(q.distractors) for q in train.queries)} with distractors)"
    )
    model_dir = train_fn(cfg, data_dir, root / "model", train)
    results["train_wall_s"] = round(time.perf_counter() - wall, 1)
    results["train_cpu_s"] = round(time.process_time() - cpu, 1)
    tuned = load_encoder(str(model_dir))
    # The same index object: documents are NOT re-encoded with the tuned model.
    results["tuned"] = {s: _recalls(index, tuned, ts) for s, ts in splits.items()}
    results["model"] = str(model_dir)
    atomic_write_json(results_path, results)
    report = render_report(results)
    atomic_write_text(root / "report.md", report)
    log(report)
    return results


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:+.1f}%"


def render_report(results: dict[str, Any]) -> str:
    """Markdown table of distractor / positive recall before and after, per split."""
    cfg = results["config"]
    lines = [
        "# LORE: query encoder tuned, document index unchanged",
        "",
        f"Dataset `{cfg['dataset']}` ({results['index']['documents']} documents indexed once "
        f"with `{results['index']['encoder']}`), {cfg['max_steps']} steps, batch "
        f"{cfg['batch_size']}, lr {cfg['lr']}, seed {cfg['seed']}; training "
        f"{results.get('train_wall_s', '-')} s wall, {results.get('train_cpu_s', '-')} s CPU.",
        "",
        "| split | metric | base | LORE | relative change |",
        "|---|---|---|---|---|",
    ]
    for split in results["base"]:
        for kind in ("distractor", "positive"):
            for k in KS:
                key = f"R@{k}"
                old = results["base"][split][kind][key]
                new = results.get("tuned", {}).get(split, {}).get(kind, {}).get(key)
                lines.append(
                    f"| {split} | {kind} {key} | {_fmt(old)} | {_fmt(new)} | "
                    f"{_pct(relative_change(new, old))} |"
                )
    if "tuned" in results:
        old, new = results["base"]["test"], results["tuned"]["test"]
        change = relative_change(new["distractor"]["R@5"], old["distractor"]["R@5"])
        kept = (new["positive"]["R@5"] or 0.0) >= (old["positive"]["R@5"] or 0.0)
        met = change is not None and change <= -0.30 and kept
        lines += [
            "",
            f"Acceptance (test: distractor R@5 >= 30% lower, positive R@5 not lower): "
            f"{'met' if met else 'not met'} (distractor {_pct(change)}, positive R@5 "
            f"{_fmt(old['positive']['R@5'])} -> {_fmt(new['positive']['R@5'])}).",
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder (resumable)")
    parser.add_argument(
        "--dataset",
        choices=("world", "wordnet", "quest"),
        default="world",
        help="quest: real QUEST-attr, distractors = pages known in some of a query's atoms "
        "but not gold; evaluated on the dev part only",
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--seed", type=int)
    args = parser.parse_args(argv)
    cfg = LoreConfig(dataset=args.dataset)
    if args.dataset == "wordnet":
        cfg = replace(cfg, size=3000)
    if args.dataset == "quest":
        cfg = replace(cfg, eval_splits=("test",))
    if args.quick:
        cfg = quick_config(cfg)
    overrides = {
        "max_steps": args.steps,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "seed": args.seed,
    }
    cfg = replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
    run_lore_experiment(args.out, cfg, log=lambda s: print(s, file=sys.stderr, flush=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
