"""LogiCoL ablation on CPU: zero-shot, SupCon, LogiCoL without constraints, LogiCoL.

Reproduces the ablation of Shen et al. 2025 (LogiCoL, Table "ablation") on held-out splits
whose atoms are disjoint from training: the generated world and the WordNet real-prose set.
Every trained condition starts from the same base model and sees the same training data,
seed, batch size, learning rate and number of steps; only the loss and the batching differ:

======================  ===========================  =========================
condition               loss                         batches
======================  ===========================  =========================
zero-shot               (no training)                -
supcon                  multi-positive SupCon        random
logicol-noconstraints   multi-positive SupCon        logical groups + alpha random
logicol                 SupCon + subset + exclusion  logical groups + alpha random
======================  ===========================  =========================

Each condition is evaluated on ``val`` (for any tuning) and ``test`` (reported): R@20,
R@100, negation violation rate and AvgGroupSim (:mod:`.metrics`). Results go to
``OUT/results.json`` after every condition (atomically), so an interrupted run resumes
where it stopped; ``OUT/report.md`` holds the tables and the relative change of LogiCoL vs
SupCon.

    python -m experiments.finetune.logicol_ablation --out DIR [--dataset both]
        [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from experiments.finetune.datasets import DatasetSpec, prepare_dataset
from experiments.finetune.metrics import relative_change
from logic_rag.atomic import atomic_write_json, atomic_write_text

__all__ = [
    "CONDITIONS",
    "RESULTS_SCHEMA",
    "AblationConfig",
    "default_config",
    "run_ablation",
    "train_condition",
    "evaluate_model",
    "render_report",
    "main",
]

#: condition -> (loss, batching, hard negatives) for the contrastive recipe; None = no
#: training. The hard-negative conditions add one hard-negative column per row (pages known
#: to match only part of the query, then mined near-misses; see
#: :mod:`logic_rag.finetune.data.hard_negatives`), a condition of its own next to LogiCoL.
CONDITIONS: dict[str, tuple[str, str, bool] | None] = {
    "zero-shot": None,
    "supcon": ("supcon", "random", False),
    "logicol-noconstraints": ("logicol-noconstraints", "groups", False),
    "logicol": ("logicol", "groups", False),
    "supcon-hardneg": ("supcon", "random", True),
    "logicol-hardneg": ("logicol", "groups", True),
}
#: The conditions of the original (world / WordNet) ablation; the QUEST run takes them all.
CLASSIC_CONDITIONS = ("zero-shot", "supcon", "logicol-noconstraints", "logicol")
RESULTS_VERSION = 1

_NUM = {"type": ["number", "null"]}
_SPLIT_METRICS = {
    "type": "object",
    "required": ["R@20", "R@100", "violation_rate", "n", "n_violation", "avg_group_sim"],
    "properties": {
        "R@20": {"type": "number", "minimum": 0, "maximum": 1},
        "R@100": {"type": "number", "minimum": 0, "maximum": 1},
        "violation_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "n": {"type": "integer", "minimum": 1},
        "n_violation": {"type": "integer", "minimum": 0},
        "avg_group_sim": _NUM,
        "by_template": {"type": "object"},
    },
}
#: JSON schema of ``results.json`` (checked in the tests).
RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["version", "config", "datasets"],
    "properties": {
        "version": {"const": RESULTS_VERSION},
        "config": {"type": "object", "required": ["max_steps", "batch_size", "seed", "base"]},
        "datasets": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "propertyNames": {"enum": list(CONDITIONS)},
                "additionalProperties": {
                    "type": "object",
                    "required": ["model", "wall_s", "cpu_s", "metrics"],
                    "properties": {
                        "model": {"type": "string"},
                        "wall_s": {"type": "number"},
                        "cpu_s": {"type": "number"},
                        "train_wall_s": {"type": "number"},
                        "train_cpu_s": {"type": "number"},
                        "train_queries": {"type": "integer"},
                        "metrics": {
                            "type": "object",
                            "required": ["test"],
                            "additionalProperties": _SPLIT_METRICS,
                        },
                    },
                },
            },
        },
    },
}


@dataclass(frozen=True)
class AblationConfig:
    """Everything that decides the numbers; a resumed run must have the same config."""

    datasets: tuple[str, ...] = ("world", "wordnet")
    eval_splits: tuple[str, ...] = ("val", "test")
    mined_negatives: int = 4
    world_entities: int = 2000
    wordnet_docs: int = 3000
    train_queries: int = 1000
    val_queries: int = 150
    test_queries: int = 300
    variants: bool = True
    base: str = "minilm"
    max_steps: int = 120
    batch_size: int = 32
    lr: float = 2e-5
    alpha: float = 0.6
    seed: int = 0
    depth: int = 100
    conditions: tuple[str, ...] = CLASSIC_CONDITIONS
    recipe_extra: dict[str, Any] = field(default_factory=dict)

    def spec(self, name: str) -> DatasetSpec:
        """The data build of dataset ``name``."""
        size = self.world_entities if name == "world" else self.wordnet_docs
        return DatasetSpec(
            name=name,  # type: ignore[arg-type]
            size=size,
            train_queries=self.train_queries,
            val_queries=self.val_queries,
            test_queries=self.test_queries,
            seed=self.seed,
        )


def default_config(*, quick: bool = False, datasets: Sequence[str] = ("world", "wordnet")):
    """The default budget (~25 min for both datasets on 2 quiet cores) or the quick one."""
    if quick:
        return AblationConfig(
            datasets=tuple(datasets),
            world_entities=600,
            wordnet_docs=1500,
            train_queries=300,
            val_queries=60,
            test_queries=100,
            max_steps=25,
            batch_size=16,
        )
    return AblationConfig(datasets=tuple(datasets))


def quest_config(**changes: Any) -> AblationConfig:
    """The real-QUEST run: every condition, evaluated on the dev part only (``test.jsonl``).

    The recipe's hyper-parameters are those of the world / WordNet ablation (not tuned on
    QUEST); 136 training queries plus Quest+Variants of the 21 atoms whose sets are complete.
    """
    cfg = AblationConfig(
        datasets=("quest",),
        eval_splits=("test",),
        conditions=tuple(CONDITIONS),
    )
    return replace(cfg, **changes)


TrainFn = Callable[..., Path]


def train_condition(
    condition: str,
    cfg: AblationConfig,
    data_dir: Path,
    out_dir: Path,
    training_set: Any,
) -> Path:
    """Train ``condition`` with the contrastive recipe; returns the final model folder."""
    loss, batching, hard_negatives = CONDITIONS[condition]  # type: ignore[misc]
    from logic_rag.finetune.recipes import ContrastiveArgs, train_contrastive

    wanted: dict[str, Any] = {
        "train": str(data_dir / "train.jsonl"),
        "docs": str(data_dir / "documents.jsonl"),
        "out": str(out_dir),
        "base": cfg.base,
        "loss": loss,
        "atoms": str(data_dir / "atoms.jsonl"),
        "batching": batching,
        "hard_negatives": hard_negatives,
        "alpha": cfg.alpha,
        "max_steps": cfg.max_steps,
        "batch_size": cfg.batch_size,
        "lr": cfg.lr,
        "seed": cfg.seed,
        **cfg.recipe_extra,
    }
    return Path(train_contrastive(ContrastiveArgs(**wanted), training_set=training_set))


def evaluate_model(
    model: str,
    data_dir: Path,
    splits: Sequence[str] = ("val", "test"),
    *,
    depth: int = 100,
    base: str | None = None,
) -> dict[str, dict[str, Any]]:
    """R@20, R@100, violation rate and AvgGroupSim of ``model`` on each split.

    Document embeddings of the ``base`` model (``model == base``) and of the base of a
    query-only model are cached under ``data_dir/embeddings``; a fully tuned model's are not.
    """
    from experiments.finetune.metrics import avg_group_sim, retrieval_metrics
    from experiments.finetune.search import (
        document_encoder_of,
        load_encoder,
        search_queries,
    )
    from logic_rag.evals.quest.data import load_atom_sets, load_quest_queries
    from logic_rag.finetune.data import load_documents_map, load_quest_training_set

    documents = load_documents_map(data_dir / "documents.jsonl")
    atom_sets = load_atom_sets(data_dir / "atoms.jsonl")
    encoder = load_encoder(model)
    # A query-only model searches documents embedded by its base: one cached encoding
    # serves zero-shot, every query-only condition and the mining of hard negatives.
    doc_encoder = document_encoder_of(encoder)
    index = document_index(
        data_dir,
        doc_encoder,
        cached=doc_encoder is not encoder or model == base,
        documents=documents,
    )
    out: dict[str, dict[str, Any]] = {}
    for split in splits:
        path = data_dir / f"{split}.jsonl"
        queries = load_quest_queries(path)
        grouped = load_quest_training_set(path, documents)
        if [q.text for q in grouped.queries] != [" ".join(q.query.split()) for q in queries]:
            raise RuntimeError(f"{path}: the two loaders disagree on the query order")
        vectors, run = search_queries(encoder, index, queries, depth)
        metrics = retrieval_metrics(run, queries, atom_sets, per_query=True)
        try:
            metrics.update(avg_group_sim(vectors, [q.group for q in grouped.queries]))
        except ValueError as exc:  # no group with two queries: say so, do not invent a 0
            metrics.update({"avg_group_sim": None, "avg_group_sim_note": str(exc)})
        out[split] = metrics
    return out


def record_card_metrics(model_dir: Path, dataset: str, metrics: dict[str, Any]) -> None:
    """The model card of a trained condition carries its held-out numbers (no per-query rows)."""
    from logic_rag.finetune.recipes.card import record_metrics

    if not (model_dir / "logic_rag_training.json").is_file():
        return  # a test's train_fn may return a folder without a training record
    summary = {
        split: {k: v for k, v in m.items() if k != "per_query"} for split, m in metrics.items()
    }
    record_metrics(model_dir, {"dataset": dataset, "held_out": summary})


def document_index(
    data_dir: Path,
    encoder: Any,
    *,
    cached: bool = True,
    documents: dict[str, str] | None = None,
) -> Any:
    """The exact index of ``data_dir/documents.jsonl`` (or its already loaded ``documents``)
    embedded by ``encoder``; with ``cached``, the embeddings are kept in
    ``data_dir/embeddings`` (weights-keyed), so the evaluation of the base and the mining of
    hard negatives encode the corpus once."""
    from experiments.finetune.search import DocumentIndex
    from logic_rag.finetune.data import load_documents_map

    if documents is None:
        documents = load_documents_map(data_dir / "documents.jsonl")
    return DocumentIndex(
        list(documents),
        list(documents.values()),
        encoder,
        cache_dir=data_dir / "embeddings" if cached else None,
    )


#: How deep the base's ranking is read for mined negatives (sentence-transformers'
#: ``range_max`` default in :func:`logic_rag.finetune.data.mined_hard_negatives`).
MINING_DEPTH = 50


def hard_negative_set(
    ts: Any, data_dir: Path, cfg: AblationConfig, *, log: Callable[[str], None] = print
) -> Any:
    """``ts`` with hard negatives: known from ``atoms.jsonl`` first, then mined with the base
    encoder.

    Mining reads the base's top :data:`MINING_DEPTH` pages from :func:`document_index`, the
    cached embeddings that the zero-shot evaluation uses too (one ~50 min encoding for
    EmbeddingGemma on 2 cores instead of two). The mined lists are cached in ``data_dir``
    by the base's weights, encoder settings, seed and count, so every condition and a
    resumed run see the same ones, and a changed model behind the same name never reads
    another model's list.
    """
    import json

    from logic_rag.evals.quest.data import load_atom_sets
    from logic_rag.finetune.data import (
        known_hard_negatives,
        ranked_hard_negatives,
        with_hard_negatives,
    )

    known = known_hard_negatives(ts, load_atom_sets(data_dir / "atoms.jsonl"))
    mined: dict[str, list[str]] = {}
    if cfg.mined_negatives > 0 and ts.queries:
        from experiments.finetune.search import load_encoder

        encoder = load_encoder(cfg.base)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in cfg.base)[:64]
        key = f"{encoder.fingerprint[:12]}-{encoder.config_fingerprint[:8]}"
        cache = data_dir / f"mined-{safe}-{key}-s{cfg.seed}-n{cfg.mined_negatives}.json"
        if cache.is_file():
            mined = json.loads(cache.read_text(encoding="utf-8"))
        else:
            index = document_index(data_dir, encoder)
            vectors = encoder.encode_queries([q.text for q in ts.queries], show_progress_bar=False)
            depth = MINING_DEPTH + max(len(q.gold) for q in ts.queries)
            hits = index.search(vectors, min(depth, len(index.doc_ids)))
            ranked = {
                q.query_id: [doc for doc, _ in row] for q, row in zip(ts.queries, hits, strict=True)
            }
            mined = ranked_hard_negatives(ts, ranked, num_negatives=cfg.mined_negatives)
            atomic_write_json(cache, mined)
    out = with_hard_negatives(ts, known, mined)
    n_known = sum(bool(known.get(q.query_id)) for q in ts.queries)
    n_any = sum(bool(q.hard_negatives) for q in out.queries)
    log(
        f"hard negatives: {n_known} of {len(ts.queries)} queries have known ones (atom sets), "
        f"{n_any} have some after mining ({cfg.mined_negatives} mined per query)"
    )
    return out


def _load_results(path: Path, cfg: AblationConfig) -> dict[str, Any]:
    import json

    fresh = {"version": RESULTS_VERSION, "config": _config_json(cfg), "datasets": {}}
    if not path.is_file():
        return fresh
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("config") != _config_json(cfg):
        raise SystemExit(
            f"{path} was written with a different configuration; use another --out folder "
            "(or delete it) to run this one"
        )
    return data


def _config_json(cfg: AblationConfig) -> dict[str, Any]:
    data = asdict(cfg)
    data["datasets"] = list(cfg.datasets)
    data["conditions"] = list(cfg.conditions)
    data["eval_splits"] = list(cfg.eval_splits)
    return data


def run_ablation(
    out: str | Path,
    cfg: AblationConfig,
    *,
    train_fn: TrainFn | None = None,
    conditions: Sequence[str] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run (or resume) every dataset x condition of ``cfg``; returns results.json's content.

    ``train_fn`` defaults to :func:`train_condition` (the contrastive recipe); tests pass
    a cheaper one.
    """
    if train_fn is None:
        train_fn = train_condition
    from experiments.finetune.datasets import training_set

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    results_path = root / "results.json"
    results = _load_results(results_path, cfg)
    log(
        f"ablation: datasets={list(cfg.datasets)} conditions={list(cfg.conditions)} "
        f"steps={cfg.max_steps} batch={cfg.batch_size} lr={cfg.lr} alpha={cfg.alpha} "
        f"seed={cfg.seed} world_entities={cfg.world_entities} wordnet_docs={cfg.wordnet_docs} "
        f"queries train/val/test={cfg.train_queries}/{cfg.val_queries}/{cfg.test_queries}"
    )
    for name in cfg.datasets:
        data_dir = prepare_dataset(cfg.spec(name), root / "data" / name)
        per_dataset = results["datasets"].setdefault(name, {})
        ts = None
        ts_hard = None
        for condition in conditions or cfg.conditions:
            if condition not in CONDITIONS:
                raise ValueError(f"unknown condition {condition!r}; use {list(CONDITIONS)}")
            if condition in per_dataset:
                log(f"[{name}] {condition}: done already, skipped")
                continue
            wall, cpu = time.perf_counter(), time.process_time()
            train_info: dict[str, Any] = {}
            if CONDITIONS[condition] is None:
                model = cfg.base
            else:
                if ts is None:
                    ts = training_set(data_dir, variants=cfg.variants, seed=cfg.seed)
                    log(f"[{name}] training set: {len(ts.queries)} queries")
                use = ts
                if CONDITIONS[condition][2]:  # type: ignore[index]
                    if ts_hard is None:
                        ts_hard = hard_negative_set(ts, data_dir, cfg, log=log)
                    use = ts_hard
                model_dir = root / "models" / name / condition
                model = str(train_fn(condition, cfg, data_dir, model_dir, use))
                train_info = {
                    "train_wall_s": round(time.perf_counter() - wall, 1),
                    "train_cpu_s": round(time.process_time() - cpu, 1),
                    "train_queries": len(ts.queries),
                }
            metrics = evaluate_model(
                model, data_dir, cfg.eval_splits, depth=cfg.depth, base=cfg.base
            )
            if CONDITIONS[condition] is not None:
                record_card_metrics(Path(model), name, metrics)
            per_dataset[condition] = {
                "model": model,
                **train_info,
                "wall_s": round(time.perf_counter() - wall, 1),
                "cpu_s": round(time.process_time() - cpu, 1),
                "metrics": metrics,
            }
            atomic_write_json(results_path, results)
            test = metrics[cfg.eval_splits[-1]]
            log(
                f"[{name}] {condition}: R@20={_fmt(test['R@20'])} R@100={_fmt(test['R@100'])} "
                f"violation={_fmt(test['violation_rate'])} "
                f"AvgGroupSim={_fmt(test['avg_group_sim'])} "
                f"({per_dataset[condition]['wall_s']} s wall, "
                f"{per_dataset[condition]['cpu_s']} s CPU)"
            )
    atomic_write_text(root / "report.md", render_report(results))
    return results


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}%"


def render_report(results: dict[str, Any], split: str = "test") -> str:
    """Markdown: one table per dataset and LogiCoL vs SupCon relative changes."""
    cfg = results["config"]
    lines = [
        "# LogiCoL ablation",
        "",
        f"Base `{cfg['base']}`, {cfg['max_steps']} steps, batch {cfg['batch_size']}, "
        f"lr {cfg['lr']}, alpha {cfg['alpha']}, seed {cfg['seed']}; split `{split}` "
        "(atoms disjoint from training). Violation rate and AvgGroupSim: lower is better.",
        "",
    ]
    if cfg.get("recipe_extra"):
        lines += [f"Recipe overrides for every trained condition: `{cfg['recipe_extra']}`.", ""]
    for name, per in results["datasets"].items():
        lines += [
            f"## {name}",
            "",
            "| condition | R@20 | R@100 | violation rate (n) | AvgGroupSim | train wall s |",
            "|---|---|---|---|---|---|",
        ]
        for condition, row in per.items():
            m = row["metrics"][split]
            lines.append(
                f"| {condition} | {_fmt(m['R@20'])} | {_fmt(m['R@100'])} | "
                f"{_fmt(m['violation_rate'])} ({m['n_violation']}) | "
                f"{_fmt(m['avg_group_sim'])} | {row.get('train_wall_s', '-')} |"
            )
        lines.append("")
        lines += _template_table(per, split) + _paired_vs_zero_shot(per, split)
        if "logicol" in per and "supcon" in per:
            new, old = per["logicol"]["metrics"][split], per["supcon"]["metrics"][split]
            lines += [
                "LogiCoL vs SupCon (relative change): "
                f"violation {_pct(relative_change(new['violation_rate'], old['violation_rate']))}"
                f", R@20 {_pct(relative_change(new['R@20'], old['R@20']))}"
                f", R@100 {_pct(relative_change(new['R@100'], old['R@100']))}.",
                "",
            ]
            verdict = acceptance(new, old)
            lines += [f"Acceptance (violation >= 20% lower, recall kept): {verdict}", ""]
    return "\n".join(lines)


def _template_table(per: dict[str, Any], split: str) -> list[str]:
    """R@20 per query template, one column per condition."""
    conditions = [c for c in per if per[c]["metrics"][split].get("by_template")]
    if not conditions:
        return []
    templates = sorted({t for c in conditions for t in per[c]["metrics"][split]["by_template"]})
    lines = [
        "R@20 per template:",
        "",
        "| template | n | " + " | ".join(conditions) + " |",
        "|---|---|" + "---|" * len(conditions),
    ]
    for t in templates:
        rows = [per[c]["metrics"][split]["by_template"].get(t, {}) for c in conditions]
        n = next((r.get("n") for r in rows if r.get("n") is not None), "-")
        lines.append(f"| {t} | {n} | " + " | ".join(_fmt(r.get("R@20")) for r in rows) + " |")
    return lines + [""]


def _paired_vs_zero_shot(per: dict[str, Any], split: str) -> list[str]:
    """Each trained condition minus zero-shot, per query: mean R@20 difference, 95% paired
    bootstrap interval, relative change, wins/losses (needs the per-query rows)."""
    from logic_rag.evals.rag.bootstrap import paired_bootstrap

    base = per.get("zero-shot", {}).get("metrics", {}).get(split, {}).get("per_query")
    if not base:
        return []
    lines = [
        "Paired against zero-shot (R@20 per query; 95% bootstrap interval of the difference):",
        "",
        "| condition | R@20 | difference [95% CI] | relative | wins / losses |",
        "|---|---|---|---|---|",
    ]
    qids = sorted(base)
    for condition, row in per.items():
        other = row["metrics"][split].get("per_query")
        if condition == "zero-shot" or not other or set(other) != set(base):
            continue
        a = [base[q]["R@20"] for q in qids]
        b = [other[q]["R@20"] for q in qids]
        d = paired_bootstrap(a, b, n_boot=5000, seed=0)
        wins = sum(y > x for x, y in zip(a, b, strict=True))
        losses = sum(y < x for x, y in zip(a, b, strict=True))
        lines.append(
            f"| {condition} | {d.mean_b:.3f} | {d.diff:+.3f} [{d.low:+.3f}, {d.high:+.3f}] | "
            f"{_pct(relative_change(d.mean_b, d.mean_a))} | {wins} / {losses} |"
        )
    return lines + [""]


def acceptance(new: dict[str, Any], old: dict[str, Any]) -> str:
    """``met`` / ``not met (...)`` for issue 5's LogiCoL target."""
    change = relative_change(new["violation_rate"], old["violation_rate"])
    if change is None:
        return "undecided (violation rate missing or SupCon at 0)"
    reasons = []
    if change > -0.20:
        reasons.append(f"violation change {_pct(change)}")
    for k in ("R@20", "R@100"):
        if new[k] is not None and old[k] is not None and new[k] < old[k]:
            reasons.append(f"{k} fell {old[k]:.3f} -> {new[k]:.3f}")
    return "met" if not reasons else "not met (" + "; ".join(reasons) + ")"


def _recipe_extra(pairs: Sequence[str]) -> dict[str, Any]:
    """``["exclusion_temperature=0.05"]`` -> ``{"exclusion_temperature": 0.05}``, typed by the
    :class:`~logic_rag.finetune.recipes.ContrastiveArgs` field's default."""
    from logic_rag.finetune.recipes import ContrastiveArgs

    defaults = {f.name: f.default for f in fields(ContrastiveArgs)}
    extra: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or name not in defaults:
            raise SystemExit(
                f"--recipe {pair!r}: expected FIELD=VALUE with a ContrastiveArgs field"
            )
        kind = type(defaults[name]) if defaults[name] is not None else str
        extra[name] = kind(text) if kind is not bool else text.lower() in ("1", "true", "yes")
    return extra


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder (resumable)")
    parser.add_argument(
        "--dataset",
        choices=("world", "wordnet", "both", "quest"),
        default="both",
        help="quest: real QUEST-attr ($LOGIC_RAG_DATA/quest/attr), split by atom, every "
        "condition, reported on the dev part",
    )
    parser.add_argument("--base", help="override the base model (registry name or folder)")
    parser.add_argument("--mined-negatives", type=int, help="mined hard negatives per query")
    parser.add_argument("--quick", action="store_true", help="small data and few steps")
    parser.add_argument("--steps", type=int, help="override max_steps")
    parser.add_argument("--batch-size", type=int, help="override the batch size")
    parser.add_argument("--alpha", type=float, help="override alpha (share of random queries)")
    parser.add_argument("--lr", type=float, help="override the learning rate")
    parser.add_argument("--seed", type=int, help="override the seed")
    parser.add_argument("--no-variants", action="store_true", help="train split only")
    parser.add_argument(
        "--recipe",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="extra ContrastiveArgs field for every trained condition, e.g. "
        "exclusion_temperature=0.05 (repeatable)",
    )
    parser.add_argument(
        "--conditions", nargs="+", choices=list(CONDITIONS), help="subset, in this order"
    )
    args = parser.parse_args(argv)
    datasets = ("world", "wordnet") if args.dataset == "both" else (args.dataset,)
    if args.dataset == "quest":
        cfg = quest_config()
    else:
        cfg = default_config(quick=args.quick, datasets=datasets)
    overrides = {
        "max_steps": args.steps,
        "batch_size": args.batch_size,
        "alpha": args.alpha,
        "lr": args.lr,
        "seed": args.seed,
        "base": args.base,
        "mined_negatives": args.mined_negatives,
    }
    cfg = replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
    if args.no_variants:
        cfg = replace(cfg, variants=False)
    if args.recipe:
        cfg = replace(cfg, recipe_extra=_recipe_extra(args.recipe))
    start = time.perf_counter()
    run_ablation(
        args.out,
        cfg,
        conditions=args.conditions,
        log=lambda s: print(s, file=sys.stderr, flush=True),
    )
    print(
        f"wrote {Path(args.out) / 'results.json'} and report.md in "
        f"{time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
