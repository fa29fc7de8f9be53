"""Experiments of issue 5: the LogiCoL ablation and the LORE before/after comparison.

* :mod:`.metrics`: R@k and violation rate (via ``evals.quest``), AvgGroupSim, LORE's
  distractor / positive recall@k.
* :mod:`.datasets`: build or reuse the generated world and the WordNet set.
* :mod:`.search`: encode once, exact FAISS search.
* :mod:`.logicol_ablation`: ``python -m experiments.finetune.logicol_ablation``.
* :mod:`.lore_experiment`: ``python -m experiments.finetune.lore_experiment``.
* :mod:`.paired`: ``python -m experiments.finetune.paired DATA A B [DATA A B ...]``,
  a sign test on negation violations and bootstrap intervals on recall for two encoders,
  per triple and pooled over triples (seeds).

Names resolve lazily (PEP 562): importing this package imports neither torch nor numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "avg_group_sim": "metrics",
    "mean_set_recall_at_k": "metrics",
    "relative_change": "metrics",
    "retrieval_metrics": "metrics",
    "set_recall_at_k": "metrics",
    "DatasetSpec": "datasets",
    "prepare_dataset": "datasets",
    "load_split": "datasets",
    "training_set": "datasets",
    "DocumentIndex": "search",
    "load_encoder": "search",
    "search_queries": "search",
    "compare_per_query": "paired",
    "per_query_metrics": "paired",
    "pool_tables": "paired",
    "violation_sign_test": "paired",
    "AblationConfig": "logicol_ablation",
    "CONDITIONS": "logicol_ablation",
    "default_config": "logicol_ablation",
    "run_ablation": "logicol_ablation",
    "LoreConfig": "lore_experiment",
    "run_lore_experiment": "lore_experiment",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .datasets import DatasetSpec, load_split, prepare_dataset, training_set
    from .logicol_ablation import CONDITIONS, AblationConfig, default_config, run_ablation
    from .lore_experiment import LoreConfig, run_lore_experiment
    from .metrics import (
        avg_group_sim,
        mean_set_recall_at_k,
        relative_change,
        retrieval_metrics,
        set_recall_at_k,
    )
    from .paired import compare_per_query, per_query_metrics, pool_tables, violation_sign_test
    from .search import DocumentIndex, load_encoder, search_queries


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
