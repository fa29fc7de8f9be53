"""QUEST-style evaluation: query loaders, set-aware retrieval metrics, result writers.

``data`` reads QUEST-format query files (official ``train/val/test.jsonl`` and our
generated worlds, which add atom gold sets); ``metrics`` scores ranked runs with the
metrics of QUEST (Malaviya et al. 2023) and LogiCoL (Shen et al. 2025); ``report`` writes
``results.json``, markdown tables and figures. Heavy libraries (ir-measures, matplotlib)
are imported only inside the functions that need them.
"""

from __future__ import annotations

from logic_rag.evals.quest.data import (
    NEGATION_TEMPLATES,
    QUEST_TEMPLATES,
    QuestQuery,
    load_atom_sets,
    load_quest_queries,
    marked_atoms,
)
from logic_rag.evals.quest.metrics import (
    DEFAULT_KS,
    DEFAULT_MRECALL_KS,
    DEFAULT_SET_CUTOFF,
    UNKNOWN_TEMPLATE,
    evaluate_run,
    excluded_docs,
    metric_names,
    mrecall_at_k,
    negation_violation,
    pairwise_order,
    ranked_doc_ids,
    set_prf,
)
from logic_rag.evals.quest.report import (
    RESULTS_FILENAME,
    RESULTS_SCHEMA,
    format_overall_table,
    format_table,
    load_results,
    plot_recall_by_template,
    plot_similarity_scatter,
    write_report_md,
    write_results,
)

__all__ = [
    "NEGATION_TEMPLATES",
    "QUEST_TEMPLATES",
    "QuestQuery",
    "load_atom_sets",
    "load_quest_queries",
    "marked_atoms",
    "DEFAULT_KS",
    "DEFAULT_MRECALL_KS",
    "DEFAULT_SET_CUTOFF",
    "UNKNOWN_TEMPLATE",
    "evaluate_run",
    "excluded_docs",
    "metric_names",
    "mrecall_at_k",
    "negation_violation",
    "pairwise_order",
    "ranked_doc_ids",
    "set_prf",
    "RESULTS_FILENAME",
    "RESULTS_SCHEMA",
    "format_overall_table",
    "format_table",
    "load_results",
    "plot_recall_by_template",
    "plot_similarity_scatter",
    "write_report_md",
    "write_results",
]
