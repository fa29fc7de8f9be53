"""Comparing two retrievers on the same questions: paired differences and judge preferences.

Both runs answer the same items, so per-metric differences B - A are paired (item by
item; A = ``--retriever``, B = ``--compare``, e.g. base vs fine-tuned) and their
uncertainty comes from the paired bootstrap of :mod:`.bootstrap`, using only the items
where both runs have a score (a parse failure on either side drops the pair; kept and
dropped pairs are reported). On top of that the pairwise judge compares
the two answers of each item in both orders (:meth:`Judges.pairwise`); its verdicts are
cached in ``OUT/pairwise.jsonl`` so a resumed comparison does not judge again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any

from .cache import ItemCache

__all__ = ["paired_metric_differences", "pairwise_preferences", "compare_runs"]


def _aligned(
    records_a: Sequence[Mapping[str, Any]], records_b: Sequence[Mapping[str, Any]], metric: str
) -> tuple[list[float | None], list[float | None]]:
    """Scores of the items both runs answered, aligned by id; ``None`` where unscored."""
    by_id = {str(r["id"]): r for r in records_b}
    a_values: list[float | None] = []
    b_values: list[float | None] = []
    for record in records_a:
        other = by_id.get(str(record["id"]))
        if other is None:
            continue
        a = record.get("metrics", {}).get(metric)
        b = other.get("metrics", {}).get(metric)
        a_values.append(None if a is None else float(a))
        b_values.append(None if b is None else float(b))
    return a_values, b_values


def paired_metric_differences(
    records_a: Sequence[Mapping[str, Any]],
    records_b: Sequence[Mapping[str, Any]],
    *,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """``{metric: PairedDifference as a dict}`` for every metric either run scored.

    ``diff`` is mean(B) - mean(A) over the items both runs scored (B = ``--compare``),
    with a percentile bootstrap interval; ``n_dropped`` counts pairs with a missing
    score on either side (parse failures, unjudged empty answers).
    """
    from .bootstrap import paired_bootstrap

    metrics: list[str] = []
    for record in [*records_a, *records_b]:
        for name in record.get("metrics", {}):
            if name not in metrics:
                metrics.append(name)
    out: dict[str, dict[str, Any]] = {}
    for metric in metrics:
        a, b = _aligned(records_a, records_b, metric)
        kept = sum(1 for x, y in zip(a, b, strict=True) if x is not None and y is not None)
        if not kept:
            out[metric] = {"n": 0, "n_dropped": len(a), "diff": None}
            continue
        result = paired_bootstrap(a, b, n_boot=n_boot, confidence=confidence, seed=seed)
        row = asdict(result) if is_dataclass(result) else dict(result)
        row["confidence"] = confidence
        out[metric] = row
    return out


def pairwise_preferences(
    records_a: Sequence[Mapping[str, Any]],
    records_b: Sequence[Mapping[str, Any]],
    judges: Any,
    *,
    cache_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Pairwise judge verdicts A vs B per item (both orders, consensus) and their tallies.

    ``win_rate_a`` counts a tie or an order-dependent (inconsistent) verdict as half a
    win and leaves parse failures out.
    """
    from tqdm.auto import tqdm

    cache = ItemCache(cache_path) if cache_path is not None else None
    done = cache.load() if cache is not None else {}
    by_id = {str(r["id"]): r for r in records_b}
    verdicts: dict[str, str] = {}
    pending = [r for r in records_a if str(r["id"]) in by_id]
    for record in tqdm(pending, desc="pairwise", unit="item", disable=False):
        item_id = str(record["id"])
        if item_id in done:
            verdicts[item_id] = done[item_id]["winner"]
            continue
        other = by_id[item_id]
        if not record.get("answer") or not other.get("answer"):
            verdicts[item_id] = "failed"
            row = {"id": item_id, "winner": "failed", "raw": ["(empty answer)"]}
        else:
            verdict = judges.pairwise(record["question"], record["answer"], other["answer"])
            verdicts[item_id] = verdict.winner
            row = {"id": item_id, **verdict.to_json()}
        if cache is not None:
            cache.append(row)
    counts = {w: 0 for w in ("a", "b", "tie", "inconsistent", "failed")}
    for winner in verdicts.values():
        counts[winner] += 1
    decided = counts["a"] + counts["b"] + counts["tie"] + counts["inconsistent"]
    wins = counts["a"] + 0.5 * (counts["tie"] + counts["inconsistent"])
    return {
        "counts": counts,
        "n": len(verdicts),
        "win_rate_a": wins / decided if decided else None,
        "parse_failures": counts["failed"],
        "verdicts": verdicts,
    }


def compare_runs(
    records_a: Sequence[Mapping[str, Any]],
    records_b: Sequence[Mapping[str, Any]],
    *,
    config: Any,
    judges: Any | None,
    summary_b: Mapping[str, Any] | None = None,
    cache_path: str | os.PathLike[str] | None = None,
    labels: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """One comparison block of ``results.json``: A, B are ``labels`` (default
    ``--retriever`` and the first ``--compare``); no pairwise judge when ``judges`` is None."""
    if labels is None:
        first = config.compare[0] if config.compare else None
        labels = (config.retriever, first)
    result: dict[str, Any] = {
        "a": labels[0],
        "b": labels[1],
        "paired": paired_metric_differences(
            records_a, records_b, n_boot=config.n_boot, seed=config.seed
        ),
    }
    if summary_b is not None:
        result["b_summary"] = {k: v for k, v in summary_b.items() if k not in ("metrics",)} | {
            "metrics": summary_b.get("metrics", {})
        }
    if judges is not None:
        result["pairwise"] = pairwise_preferences(
            records_a, records_b, judges, cache_path=cache_path
        )
    return result
