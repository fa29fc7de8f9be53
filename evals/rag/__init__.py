"""RAG evaluation: retrieve -> generate -> judge (LlamaIndex evaluators) -> report.

* :func:`run_rag_eval` / :class:`RagEvalConfig`: the resumable runner (``logic-rag eval rag``).
* :func:`run_meta_eval`: agreement of the LLM judge with ALCE human utility ratings.
* :class:`Judges`: LlamaIndex's correctness, answer-relevancy and pairwise evaluators
  with an explicit judge LLM and robust parsers (:mod:`.parsing`).
* :func:`compare_runs`: paired differences (bootstrap) and pairwise preferences.
* :func:`write_reports`: ``report.md`` and a self-contained ``report.html``.
* Data and metrics: :func:`load_rag_dataset`, :func:`default_corpus`, :func:`rouge_lsum`,
  :func:`exact_match_recall`, :func:`paired_bootstrap`, :func:`load_human_ratings`,
  :func:`judge_agreement`.

Names resolve lazily (PEP 562) so that importing this package imports no model code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "RagEvalConfig": "runner",
    "run_rag_eval": "runner",
    "run_meta_eval": "runner",
    "summarize_items": "runner",
    "open_retriever": "runner",
    "DATASETS": "runner",
    "Judges": "judges",
    "JudgeScore": "judges",
    "PairwiseVerdict": "judges",
    "JUDGE_METRICS": "judges",
    "parse_correctness": "parsing",
    "parse_relevancy": "parsing",
    "parse_pairwise": "parsing",
    "parse_score": "parsing",
    "build_rag_prompt": "prompts",
    "SYSTEM_PROMPT": "prompts",
    "ItemCache": "cache",
    "RunSettingsMismatch": "cache",
    "compare_runs": "compare",
    "paired_metric_differences": "compare",
    "pairwise_preferences": "compare",
    "write_reports": "report",
    "add_rag_parser": "cli",
    "run_from_args": "cli",
    # building blocks from the data/metrics modules
    "RagExample": "datasets",
    "load_rag_dataset": "datasets",
    "default_corpus": "pool",
    "excluded_for": "pool",
    "rouge_lsum": "metrics",
    "exact_match_recall": "metrics",
    "PairedDifference": "bootstrap",
    "paired_bootstrap": "bootstrap",
    "HumanRating": "meta_eval",
    "load_human_ratings": "meta_eval",
    "judge_agreement": "meta_eval",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .bootstrap import PairedDifference, paired_bootstrap
    from .cache import ItemCache, RunSettingsMismatch
    from .cli import add_rag_parser, run_from_args
    from .compare import compare_runs, paired_metric_differences, pairwise_preferences
    from .datasets import RagExample, load_rag_dataset
    from .judges import JUDGE_METRICS, Judges, JudgeScore, PairwiseVerdict
    from .meta_eval import HumanRating, judge_agreement, load_human_ratings
    from .metrics import exact_match_recall, rouge_lsum
    from .parsing import parse_correctness, parse_pairwise, parse_relevancy, parse_score
    from .pool import default_corpus, excluded_for
    from .prompts import SYSTEM_PROMPT, build_rag_prompt
    from .report import write_reports
    from .runner import (
        DATASETS,
        RagEvalConfig,
        open_retriever,
        run_meta_eval,
        run_rag_eval,
        summarize_items,
    )


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
