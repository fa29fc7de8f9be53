"""How well do ALCE's automatic metrics agree with people? A bound for the LLM judges.

ALCE's human utility ratings (``rag/alce/human_eval_utility_completed.json``: 4 systems x
~100 questions each for ASQA and ELI5) carry, per answer, ALCE's own automatic correctness
(ASQA: STR-EM per disambiguated question; ELI5: claim recall by an NLI model). This
script measures, per dataset and on the same dev/test split by question as the judge
meta-evaluation (:func:`logic_rag.evals.rag.judge_meta.split_of`), the Spearman
correlation with utility of:

* ``alce_correctness``: the mean of the file's automatic correctness booleans;
* ``str_em`` and ``rougeL`` (ASQA only): our :mod:`~logic_rag.evals.rag.metrics`, recomputed
  against the references of the questions that are in ``asqa_dev500.jsonl`` (ALCE's rated
  questions are ASQA dev questions); ``str_em`` must equal the file's booleans' mean,
  which checks our STR-EM against ALCE's on real answers;
* ``answer_words``: answer length, the cheapest baseline.

If no automatic metric reaches the judge's Spearman, the judge is not the weak link: the
ratings measure something the references cannot see. Nothing here calls an LLM.

    python -m experiments.alce_metric_agreement [--out runs/alce-agreement.json]
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logic_rag.evals.rag.datasets import load_rag_dataset
from logic_rag.evals.rag.judge_meta import split_of
from logic_rag.evals.rag.metrics import answer_words, exact_match_recall, rouge_lsum
from logic_rag.paths import shared_data_dir


def _spearman_ci(x: Sequence[float], y: Sequence[float], n_boot: int = 1000) -> dict[str, Any]:
    import numpy as np
    from scipy import stats

    if len(x) < 3 or len(set(x)) < 2:
        return {"n": len(x), "spearman": None, "ci": None}
    rho = float(stats.spearmanr(x, y).statistic)
    rng = np.random.default_rng(0)
    xa, ya = np.asarray(x), np.asarray(y)
    boots = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(xa), len(xa))
        if len(set(xa[idx])) > 1 and len(set(ya[idx])) > 1:
            boots.append(float(stats.spearmanr(xa[idx], ya[idx]).statistic))
    ci = [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))] if boots else None
    return {"n": len(x), "spearman": rho, "ci": ci}


def rows(ratings_path: Path, asqa_path: Path) -> list[dict[str, Any]]:
    """One row per rated answer: dataset, split, utility and every automatic metric."""
    data = json.loads(ratings_path.read_text(encoding="utf-8"))
    refs = {ex.id: ex for ex in load_rag_dataset("asqa", asqa_path)} if asqa_path.is_file() else {}
    out = []
    for dataset, systems in data.items():
        for system, items in systems.items():
            for qid, item in items.items():
                if qid == "overall_results" or not isinstance(item, dict):
                    continue
                flags = item.get("automatic_correctness_scores") or []
                row: dict[str, Any] = {
                    "dataset": dataset,
                    "system": system,
                    "id": qid,
                    "split": split_of(dataset, f"{dataset}/{system}/{qid}"),
                    "utility": float(item["utility_score"]),
                    "alce_correctness": sum(map(bool, flags)) / len(flags) if flags else None,
                    "answer_words": float(answer_words(item["output"])),
                }
                ref = refs.get(qid) if dataset == "asqa" else None
                if ref is not None:
                    row["str_em"] = exact_match_recall(item["output"], ref.short_answers)
                    row["rougeL"] = rouge_lsum(item["output"], ref.answers)
                out.append(row)
    return out


def agreement(table: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Spearman [95% CI] with utility per metric, dataset and split."""
    result: dict[str, Any] = {}
    for metric in ("alce_correctness", "str_em", "rougeL", "answer_words"):
        for dataset in sorted({r["dataset"] for r in table}):
            for split in ("dev", "test", "all"):
                cell = [
                    r
                    for r in table
                    if r["dataset"] == dataset
                    and (split == "all" or r["split"] == split)
                    and r.get(metric) is not None
                ]
                if cell:
                    block = _spearman_ci([r[metric] for r in cell], [r["utility"] for r in cell])
                    result.setdefault(metric, {}).setdefault(dataset, {})[split] = block
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = shared_data_dir()
    parser.add_argument(
        "--ratings", type=Path, default=root / "rag/alce/human_eval_utility_completed.json"
    )
    parser.add_argument("--asqa", type=Path, default=root / "rag/asqa/asqa_dev500.jsonl")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    table = rows(args.ratings, args.asqa)
    checked = [r for r in table if "str_em" in r and r["alce_correctness"] is not None]
    same = sum(1 for r in checked if math.isclose(r["str_em"], r["alce_correctness"]))
    result = {
        "rated_answers": len(table),
        "str_em_equals_alce": {"answers": len(checked), "equal": same},
        "agreement": agreement(table),
    }
    print(f"our STR-EM equals ALCE's on {same} of {len(checked)} rated ASQA answers")
    for metric, per_dataset in result["agreement"].items():
        for dataset, splits in per_dataset.items():
            cells = []
            for split in ("dev", "test"):
                b = splits.get(split)
                if b and b["spearman"] is not None:
                    lo, hi = b["ci"] or (math.nan, math.nan)
                    cells.append(f"{split} {b['spearman']:.3f} [{lo:.2f}, {hi:.2f}] (n={b['n']})")
            print(f"{metric:17s} {dataset:5s} " + "; ".join(cells))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
