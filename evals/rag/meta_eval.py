"""Judge meta-evaluation: does an LLM judge rank answers the way people do?

ALCE (Gao et al. 2023) had people rate the utility (1-5) of answers from 4 systems to
about 100 ASQA and 100 ELI5 questions. :func:`load_human_ratings` reads that file
(``{dataset: {system file: {question id: {id, question, output, utility_score,
automatic_correctness_scores}}}}``; each system also holds an ``overall_results`` entry
with ALCE's automatic metrics, which is not a rating and is skipped).
:func:`judge_agreement` correlates a judge's scores with those ratings (Spearman's rho and
Kendall's tau-b, via scipy), per dataset and overall. Items the judge could not score are
counted as missing, never scored as 0.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_rag.errors import CorpusFormatError
from logic_rag.paths import shared_data_dir

__all__ = ["HumanRating", "default_ratings_path", "load_human_ratings", "judge_agreement"]


@dataclass(frozen=True)
class HumanRating:
    """One human-rated answer; ``item_id`` is ``"<dataset>/<system>/<question id>"``."""

    dataset: str
    system: str
    question: str
    output: str
    utility: float
    item_id: str


def default_ratings_path() -> Path:
    """``rag/alce/human_eval_utility_completed.json`` under the shared data folder."""
    return shared_data_dir() / "rag" / "alce" / "human_eval_utility_completed.json"


def _system_name(file_name: str) -> str:
    """ALCE names systems by their result file; drop a trailing ``.json``."""
    return file_name.removesuffix(".json")


def load_human_ratings(path: str | os.PathLike[str] | None = None) -> list[HumanRating]:
    """Read ALCE's human utility ratings, in file order.

    Raises :class:`CorpusFormatError` when the structure differs or a rated item lacks a
    numeric ``utility_score``.
    """
    path = Path(path) if path is not None else default_ratings_path()
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such file (ALCE human_eval/human_eval_utility_completed.json; "
            "set LOGIC_RAG_DATA or pass its path)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusFormatError(path, exc.lineno, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise CorpusFormatError(path, None, "expected {dataset: {system: {id: rating}}}")
    ratings: list[HumanRating] = []
    for dataset, systems in data.items():
        if not isinstance(systems, dict):
            raise CorpusFormatError(path, None, f"{dataset}: expected {{system: {{id: rating}}}}")
        for system_file, items in systems.items():
            system = _system_name(str(system_file))
            if not isinstance(items, dict):
                raise CorpusFormatError(path, None, f"{dataset}/{system_file}: expected an object")
            for key, item in items.items():
                where = f"{dataset}/{system_file}/{key}: "
                if not isinstance(item, dict):
                    raise CorpusFormatError(path, None, where + "expected an object")
                if "output" not in item and "utility_score" not in item:
                    continue  # "overall_results": ALCE's automatic metrics, not a rating
                utility = item.get("utility_score")
                if isinstance(utility, bool) or not isinstance(utility, int | float):
                    raise CorpusFormatError(path, None, where + "'utility_score' must be a number")
                question, output = item.get("question"), item.get("output")
                if not isinstance(question, str) or not isinstance(output, str):
                    raise CorpusFormatError(
                        path, None, where + "'question' and 'output' must be strings"
                    )
                qid = str(item.get("id", key))
                ratings.append(
                    HumanRating(
                        dataset=str(dataset),
                        system=system,
                        question=question,
                        output=output,
                        utility=float(utility),
                        item_id=f"{dataset}/{system}/{qid}",
                    )
                )
    if not ratings:
        raise CorpusFormatError(path, None, "the file holds no ratings")
    return ratings


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _correlations(judge: Sequence[float], human: Sequence[float]) -> dict[str, Any]:
    """Spearman and Kendall (tau-b) with p-values; None where undefined (n < 2, constant)."""
    from scipy import stats

    out: dict[str, Any] = {"spearman": None, "spearman_p": None, "kendall": None, "kendall_p": None}
    if len(judge) < 2 or len(set(judge)) < 2 or len(set(human)) < 2:
        return out
    rho = stats.spearmanr(judge, human)
    tau = stats.kendalltau(judge, human)
    out["spearman"], out["spearman_p"] = _finite(rho.statistic), _finite(rho.pvalue)
    out["kendall"], out["kendall_p"] = _finite(tau.statistic), _finite(tau.pvalue)
    return out


def _block(
    judge_scores: Mapping[str, float | None], ratings: Sequence[HumanRating]
) -> dict[str, Any]:
    judge: list[float] = []
    human: list[float] = []
    missing = 0
    for rating in ratings:
        score = judge_scores.get(rating.item_id)
        if score is None or (isinstance(score, float) and math.isnan(score)):
            missing += 1
            continue
        judge.append(float(score))
        human.append(rating.utility)
    return {"n": len(judge), "n_missing": missing, **_correlations(judge, human)}


def judge_agreement(
    judge_scores: Mapping[str, float | None], ratings: Sequence[HumanRating]
) -> dict[str, Any]:
    """Rank agreement of judge scores (keyed by ``item_id``) with human utility.

    Returns ``{"n", "n_missing", "spearman", "spearman_p", "kendall", "kendall_p",
    "per_dataset": {dataset: {same keys}}}``: ``n`` counts the items with both scores,
    ``n_missing`` the rated items the judge did not score (absent or ``None``). A
    correlation is ``None`` where undefined (fewer than 2 items, or constant scores).
    The overall block pools every dataset's items.
    """
    by_dataset: dict[str, list[HumanRating]] = {}
    for rating in ratings:
        by_dataset.setdefault(rating.dataset, []).append(rating)
    result = _block(judge_scores, ratings)
    result["per_dataset"] = {ds: _block(judge_scores, rs) for ds, rs in by_dataset.items()}
    return result
