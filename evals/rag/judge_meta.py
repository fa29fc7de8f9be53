"""Meta-evaluation of small-model judge set-ups against ALCE's human utility ratings.

``logic-rag eval rag --meta-eval --judge qwen2.5-coder-1.5b --judge-setup choices`` (or
:func:`meta_eval_judges`) scores every rated answer with every set-up of
:mod:`.small_judges` (each rubric's expected score and its greedy answer, plus the
grammar-constrained ``Score: N`` judge) and reports, per set-up, split and dataset:
Spearman and Kendall (tau-b) with human utility, each with a bootstrap 95% CI over items,
and the parse-failure rate.

The split is by question (``dev`` / ``test`` by a stable hash of dataset and question
id, so the four systems' answers to one question stay together). The default set-up is
*chosen on dev* (highest pooled Spearman among set-ups without parse failures above 2%)
and *reported on test*. Items are visited round-robin over (dataset, system, split), so
a run stopped early (``--limit``, or a kill: it resumes from ``OUT/judge_items.jsonl``)
still covers every cell evenly.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEV_TEST", "meta_eval_judges", "split_of", "summarise_setups", "balanced_order"]

ITEMS_FILE = "judge_items.jsonl"
#: Rubrics measured by default: those that rate utility and need no reference answer (the
#: human file has none); "relevancy" rates topicality, not utility, and is left out.
DEFAULT_RUBRICS = ("binary", "likert3", "likert5")
DEV_TEST = ("dev", "test")
MAX_FAILURE_RATE = 0.02


def split_of(dataset: str, item_id: str) -> str:
    """``"dev"`` or ``"test"``, stable, by the question (not the system) of ``item_id``."""
    question = item_id.rsplit("/", 1)[-1]
    digest = hashlib.sha256(f"{dataset}/{question}".encode()).digest()
    return DEV_TEST[digest[0] % 2]


def balanced_order(ratings: Sequence[Any]) -> list[Any]:
    """Round-robin over (dataset, split, system) cells, file order inside each cell."""
    cells: dict[tuple[str, str, str], list[Any]] = {}
    for r in ratings:
        cells.setdefault((r.dataset, split_of(r.dataset, r.item_id), r.system), []).append(r)
    queues = [cells[k] for k in sorted(cells)]
    out: list[Any] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def _rank_stats(judge: Sequence[float], human: Sequence[float]) -> tuple[float, float]:
    from scipy import stats

    if len(judge) < 3 or len(set(judge)) < 2 or len(set(human)) < 2:
        return math.nan, math.nan
    return float(stats.spearmanr(judge, human).statistic), float(
        stats.kendalltau(judge, human).statistic
    )


def _with_ci(
    judge: Sequence[float], human: Sequence[float], n_boot: int, seed: int
) -> dict[str, Any]:
    import numpy as np

    rho, tau = _rank_stats(judge, human)
    block: dict[str, Any] = {"n": len(judge), "spearman": rho, "kendall": tau}
    if len(judge) < 3 or math.isnan(rho):
        block.update(spearman_ci=None, kendall_ci=None)
        return block
    rng = np.random.default_rng(seed)
    j, h = np.asarray(judge), np.asarray(human)
    rhos, taus = [], []
    for _ in range(n_boot):
        idx = rng.integers(0, len(j), len(j))
        r, t = _rank_stats(j[idx].tolist(), h[idx].tolist())
        if not math.isnan(r):
            rhos.append(r)
            taus.append(t)
    if rhos:
        block["spearman_ci"] = [float(np.percentile(rhos, 2.5)), float(np.percentile(rhos, 97.5))]
        block["kendall_ci"] = [float(np.percentile(taus, 2.5)), float(np.percentile(taus, 97.5))]
    else:
        block.update(spearman_ci=None, kendall_ci=None)
    return block


def _setup_values(record: Mapping[str, Any]) -> dict[str, float | None]:
    """Every set-up's score on one item: ``<rubric>`` (expected), ``<rubric>-greedy``..."""
    values: dict[str, float | None] = {}
    for name, scored in (record.get("choices") or {}).items():
        values[name] = scored.get("score")
        values[f"{name}-greedy"] = scored.get("greedy")
    if "grammar" in record:
        values["likert5-grammar"] = record["grammar"].get("score")
    if "llamaindex" in record:
        values["llamaindex-correctness"] = record["llamaindex"].get("score")
    return values


def summarise_setups(
    records: Sequence[Mapping[str, Any]], *, n_boot: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Agreement of each set-up with humans per split and dataset; the dev-chosen default."""
    setups: list[str] = []
    for record in records:
        for name in _setup_values(record):
            if name not in setups:
                setups.append(name)
    table: dict[str, Any] = {}
    for setup in setups:
        per_split: dict[str, Any] = {}
        for split in (*DEV_TEST, "all"):
            rows = [r for r in records if split == "all" or r["split"] == split]
            blocks: dict[str, Any] = {}
            for dataset in ["pooled", *sorted({r["dataset"] for r in rows})]:
                cell = [r for r in rows if dataset == "pooled" or r["dataset"] == dataset]
                scored = [
                    (v, r["utility"])
                    for r in cell
                    if (v := _setup_values(r).get(setup)) is not None
                ]
                attempted = [r for r in cell if setup in _setup_values(r)]
                block = _with_ci([s for s, _ in scored], [u for _, u in scored], n_boot, seed)
                block["attempted"] = len(attempted)
                block["parse_failures"] = len(attempted) - len(scored)
                block["failure_rate"] = (
                    (len(attempted) - len(scored)) / len(attempted) if attempted else None
                )
                blocks[dataset] = block
            per_split[split] = blocks
        table[setup] = per_split

    def dev_rho(setup: str) -> float:
        block = table[setup]["dev"]["pooled"]
        rate = block["failure_rate"]
        if rate is None or rate > MAX_FAILURE_RATE or block["spearman"] is None:
            return -math.inf
        return -math.inf if math.isnan(block["spearman"]) else block["spearman"]

    chosen = max(setups, key=dev_rho) if setups else None
    return {"setups": table, "chosen_on_dev": chosen}


def meta_eval_judges(
    judge: str,
    out: str | os.PathLike[str],
    *,
    rubrics: Sequence[str] | None = None,
    grammar: bool = True,
    limit: int | None = None,
    ratings_path: str | os.PathLike[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    generator: Any | None = None,
    on_item: Any | None = None,
) -> dict[str, Any]:
    """Score ALCE's rated answers with every judge set-up; write ``results.json``/``report.md``.

    ``limit`` caps the rated answers per dataset (in :func:`balanced_order`); ``rubrics``
    defaults to :data:`DEFAULT_RUBRICS`.
    """
    from tqdm.auto import tqdm

    from logic_rag.atomic import atomic_write_json, atomic_write_text

    from .cache import ItemCache, check_run_settings
    from .meta_eval import load_human_ratings
    from .runner import _jsonable
    from .small_judges import RUBRICS, ChoiceJudge, GrammarJudge, supports_choices

    wall0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = list(rubrics) if rubrics else list(DEFAULT_RUBRICS)
    check_run_settings(
        out,
        {"mode": "judge-setups", "judge": judge, "rubrics": names, "grammar": grammar},
    )
    if generator is None:
        from logic_rag.generators import make_generator

        generator = make_generator(judge)
    choice_judge = ChoiceJudge(generator, names) if supports_choices(generator) else None
    grammar_judge = GrammarJudge(generator) if grammar else None
    ratings = balanced_order(load_human_ratings(ratings_path))
    if limit:
        taken: dict[str, int] = {}
        kept = []
        for r in ratings:
            if taken.get(r.dataset, 0) < limit:
                taken[r.dataset] = taken.get(r.dataset, 0) + 1
                kept.append(r)
        ratings = kept
    cache = ItemCache(out / ITEMS_FILE, key="item_id")
    done = cache.load()
    todo = [r for r in ratings if r.item_id not in done]
    for i, rating in enumerate(tqdm(todo, desc=f"judge set-ups {judge}", unit="item")):
        t0 = time.perf_counter()
        record: dict[str, Any] = {
            "item_id": rating.item_id,
            "dataset": rating.dataset,
            "system": rating.system,
            "split": split_of(rating.dataset, rating.item_id),
            "utility": rating.utility,
        }
        if choice_judge is not None:
            scores = choice_judge.score(rating.question, rating.output)
            record["choices"] = {k: v.to_json() for k, v in scores.items()}
        if grammar_judge is not None:
            record["grammar"] = grammar_judge.score(rating.question, rating.output)
        record["seconds"] = time.perf_counter() - t0
        cache.append(record)
        if on_item is not None:
            on_item(i, record)
    finished = cache.items()
    records = [finished[r.item_id] for r in ratings if r.item_id in finished]
    summary = summarise_setups(records, n_boot=n_boot, seed=seed)
    results = {
        "judge_setups_meta_eval": {
            "judge": getattr(generator, "name", judge),
            "n": len(records),
            "rubrics": {n: RUBRICS[n].instruction for n in names},
            "system": choice_judge.system if choice_judge else None,
            **summary,
        },
        "timings": {
            "wall_s": time.perf_counter() - wall0,
            "judge_s": sum(float(r.get("seconds", 0.0)) for r in records),
        },
    }
    atomic_write_json(out / "results.json", _jsonable(results))
    atomic_write_text(out / "report.md", report_markdown(results))
    return results


def _fmt(block: Mapping[str, Any], key: str) -> str:
    value, ci = block.get(key), block.get(f"{key}_ci")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3f}" + (f" ({ci[0]:.2f}…{ci[1]:.2f})" if ci else "")


def report_markdown(results: Mapping[str, Any]) -> str:
    """A table per split: set-up x dataset, Spearman / Kendall with CIs, failure rates."""
    meta = results["judge_setups_meta_eval"]
    lines = [
        f"# Judge set-ups against ALCE human utility: {meta['judge']}",
        "",
        f"{meta['n']} rated answers; default chosen on dev: **{meta['chosen_on_dev']}**. "
        "Spearman / Kendall tau-b with bootstrap 95% CIs; failures = judgements without a "
        "score (never scored 0).",
        "",
    ]
    for split in ("test", "dev", "all"):
        lines += [f"## {split}", "", "| set-up | data | n | Spearman | Kendall | failures |"]
        lines.append("|---|---|---:|---|---|---:|")
        for setup, per_split in meta["setups"].items():
            for dataset, block in per_split[split].items():
                rate = block.get("failure_rate")
                lines.append(
                    f"| {setup} | {dataset} | {block['n']} | {_fmt(block, 'spearman')} | "
                    f"{_fmt(block, 'kendall')} | "
                    f"{block['parse_failures']} ({'n/a' if rate is None else f'{rate:.1%}'}) |"
                )
        lines.append("")
    lines += ["## Prompts", "", f"System: {meta.get('system')}", ""]
    for name, text in meta["rubrics"].items():
        lines.append(f"* `{name}`: {text}")
    lines.append(
        "* `likert5-grammar`: the likert5 prompt ending \"Reply with exactly 'Score: N' (N "
        'from 1 to 5).", generated under the GBNF grammar `root ::= "Score: " [1-5]`.'
    )
    return "\n".join(lines) + "\n"
