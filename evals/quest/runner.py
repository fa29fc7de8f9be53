"""Run logical retrieval strategies over QUEST-format queries and score them.

``logic-rag eval quest`` and ``logic-rag demo`` both go through :func:`evaluate_strategies`:
one index, many strategies, one set of metrics per strategy. Queries are decomposed by
the retriever's decomposer (what a user gets); ``gold_logic=True`` uses the template and
``<mark>`` atoms of each QUEST record instead (an oracle decomposition).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logic_rag.evals.quest.checks import MISSING_GOLD_POLICIES, check_queries
from logic_rag.evals.quest.data import QuestQuery, load_atom_sets, load_quest_queries
from logic_rag.evals.quest.metrics import evaluate_run
from logic_rag.evals.quest.report import (
    format_table,
    plot_recall_by_template,
    write_report_md,
    write_results,
)

if TYPE_CHECKING:
    from logic_rag.strategy_settings import StrategySettings

__all__ = [
    "gold_logical_query",
    "evaluate_strategies",
    "run_eval_quest",
    "write_outputs",
    "print_table",
    "check_out_folder",
]


def gold_logical_query(query: QuestQuery) -> Any | None:
    """The query's logic from its QUEST template and atoms, or None when unknown."""
    from logic_rag.query import from_template

    if not query.template or not query.atoms:
        return None
    try:
        return from_template(query.template, list(query.atoms))
    except (ValueError, KeyError):
        return None


def search_k(strategy: str, depth: int, certify_k: int | None) -> int:
    """The k a strategy is searched at: ``quality`` at ``certify_k`` (its LLM checks decide
    that top k), every other strategy at the ranking depth."""
    if strategy == "quality" and certify_k:
        return min(certify_k, depth)
    return depth


def evaluate_strategies(
    retriever: Any,
    queries: Sequence[QuestQuery],
    strategies: Sequence[str],
    *,
    atom_sets: dict[str, set[str]] | None = None,
    depth: int = 1000,
    gold_logic: bool = False,
    batch_size: int = 64,
    progress: bool = True,
    certify_k: int | None = 20,
) -> dict[str, dict[str, Any]]:
    """``{strategy: evaluate_run(...)}`` for every strategy, searched in batches.

    Each result also holds ``costs`` (:func:`~logic_rag.evals.quest.costs.summarise_costs`):
    seconds per query, and LLM calls for ``quality``, which is searched one query at a
    time so that its seconds are each query's own latency.

    ``quality`` spends its LLM checks on the caller's top k, so it is searched at
    ``certify_k`` (``None``: at ``depth``): searched at the ranking depth its top k would be
    the whole pool and no check would decide anything. Its ranking then stops at
    ``certify_k``, so metrics deeper than that count the pages below as misses.
    """
    import time

    from tqdm.auto import tqdm

    from logic_rag.evals.quest.costs import query_cost, summarise_costs

    logic = [gold_logical_query(q) for q in queries] if gold_logic else None
    depth = min(depth, len(retriever))
    results: dict[str, dict[str, Any]] = {}
    for strategy in strategies:
        run: dict[str, list[tuple[str, float]]] = {}
        costs: list[dict[str, Any]] = []
        size = 1 if strategy == "quality" else batch_size
        bar = tqdm(
            total=len(queries), desc=f"{strategy:<15}", disable=not progress, file=sys.stderr
        )
        for start in range(0, len(queries), size):
            batch = queries[start : start + size]
            began = time.perf_counter()
            found = retriever.search_batch(
                [q.query for q in batch],
                k=search_k(strategy, depth, certify_k),
                strategy=strategy,
                logical_queries=None if logic is None else logic[start : start + size],
            )
            share = (time.perf_counter() - began) / len(batch)
            for q, hits in zip(batch, found, strict=True):
                run[q.qid] = [(h.id, float(h.score)) for h in hits]
                costs.append(query_cost(share, hits[0].logic if hits else None))
            bar.update(len(batch))
        bar.close()
        results[strategy] = evaluate_run(run, list(queries), atom_sets)
        results[strategy]["costs"] = summarise_costs(costs)
        for q, cost in zip(queries, costs, strict=True):
            if q.qid in results[strategy]["per_query"]:
                results[strategy]["per_query"][q.qid]["costs"] = cost
    return results


def run_eval_quest(
    *,
    docs: str | os.PathLike[str] | None,
    queries: str | os.PathLike[str],
    out: str | os.PathLike[str],
    model: str | None = None,
    strategies: Sequence[str] = ("rerank",),
    atoms: str | os.PathLike[str] | None = None,
    index: str | os.PathLike[str] | None = None,
    store_uri: str | None = None,
    sparse_model: str | None = None,
    gold_logic: bool = False,
    depth: int = 1000,
    decomposer: str = "rules",
    decomposer_model: str = "qwen2.5-coder-1.5b",
    settings: Sequence[StrategySettings] = (),
    missing_gold: str = "keep",
    certify_k: int | None = 20,
) -> dict[str, dict[str, Any]]:
    """Build (or open) an index, evaluate ``strategies``, write results and a report.

    ``certify_k`` is the k ``quality`` is searched at (see :func:`evaluate_strategies`).

    Gold pages missing from the corpus and queries whose text repeats an earlier one are
    warned about on stderr and recorded in ``results.json`` (``extra.query_checks``);
    ``missing_gold`` (``keep`` or ``drop``, see :mod:`logic_rag.evals.quest.checks`)
    decides whether the metrics count missing gold pages as misses or leave them out.

    ``index`` reuses an index folder (searched with ``model`` when given, e.g. a query
    encoder tuned with the documents frozen); ``store_uri`` names its Milvus store (see
    ``logic-rag search --store-uri``). ``settings`` are strategies' settings
    (:mod:`logic_rag.strategy_settings`), each for the strategies of its class (for example
    ``[VerifySettings(verifier="cross-encoder:runs/ce/model")]`` for ``verify``); the
    others search with their defaults.

    ``decomposer`` (``rules``, ``llm``, ``auto``; see :mod:`logic_rag.query.auto`) reads
    the queries, with ``decomposer_model`` as the LLM.

    With one strategy, ``out/results.json``; with several, ``out/<strategy>/results.json``
    each, plus ``out/report.md`` and ``out/recall_by_template.png`` comparing them.
    ``atoms`` defaults to ``atoms.jsonl`` beside the query file when it exists (our
    generated worlds); without atom gold sets ``violation_rate`` is null.
    """
    from logic_rag.corpus import load_documents
    from logic_rag.logic_retriever import LogicRetriever

    if missing_gold not in MISSING_GOLD_POLICIES:
        raise ValueError(
            f"missing_gold must be one of {', '.join(MISSING_GOLD_POLICIES)}, got {missing_gold!r}"
        )
    check_out_folder(out, index)
    queries_path = Path(queries)
    loaded = load_quest_queries(queries_path)
    if atoms is None and (queries_path.parent / "atoms.jsonl").is_file():
        atoms = queries_path.parent / "atoms.jsonl"
    atom_sets = load_atom_sets(atoms) if atoms is not None else None
    if index is not None and Path(index, "manifest.json").is_file():
        # ``model`` is the query encoder to use over the index (a LORE / --query-only folder,
        # or the index's own model); a model the index cannot serve raises, never ignored.
        retriever = LogicRetriever.load(index, model=model, store_uri=store_uri)
    else:
        if docs is None:
            raise ValueError("pass --docs (a corpus to index) or --index (an existing index)")
        needs_sparse = any(s.startswith("splade") for s in strategies)
        retriever = LogicRetriever.build(
            load_documents(docs),
            model=model,
            sparse_model=sparse_model or ("splade-tiny" if needs_sparse else None),
        )
        if index is not None:
            retriever.save(index)
    if decomposer != "rules":
        from logic_rag.query.auto import make_decomposer

        retriever.decomposer = make_decomposer(decomposer, model=decomposer_model)
    if settings:
        retriever = retriever.with_settings(*settings)
    loaded, checks = check_queries(loaded, {d.id for d in retriever.documents}, missing_gold)
    for line in checks.warnings():
        print(f"logic-rag eval quest: warning: {line}", file=sys.stderr)
    if not loaded:
        raise ValueError(
            f"{queries_path}: no query has a gold page in the corpus (--missing-gold drop "
            f"left none); is it the right corpus?"
        )
    results = evaluate_strategies(
        retriever,
        loaded,
        strategies,
        atom_sets=atom_sets,
        depth=depth,
        gold_logic=gold_logic,
        certify_k=certify_k,
    )
    extra: dict[str, Any] = {"gold_logic": gold_logic, "query_checks": checks.record()}
    if "quality" in strategies:
        extra["quality_k"] = search_k("quality", depth, certify_k)
    if settings:
        extra["settings"] = [_written(s) for s in settings]
    write_outputs(Path(out), results, model=retriever.dense.encoder.name, extra=extra)
    for result in results.values():  # the terminal table names the model too
        result.setdefault("model", retriever.dense.encoder.name)
    return results


def _written(settings: StrategySettings) -> Any:
    """``settings`` as the results record them: their ``to_dict()``, or their repr for a
    verifier with no JSON form."""
    try:
        return settings.to_dict()
    except TypeError:
        return repr(settings)


def check_out_folder(out: str | os.PathLike[str], index: str | os.PathLike[str] | None) -> None:
    """Refuse an ``--out`` that is, or lies inside, an index folder, before any work.

    Results written into an index folder (``results.json`` beside its manifest) made it a
    folder that is no longer only an index, so it refused to be rebuilt, and the next
    load saw unlisted files (issue 42 item 16). An ``--index`` that would be written is
    checked too (an existing folder that is not an index), so a long build is not lost at
    the save.
    """
    from logic_rag.index.store import MANIFEST_NAME, check_out_dir, has_index_manifest

    target = Path(os.path.realpath(out))  # "idx/../idx" and links name the index too
    folders = [target, *target.parents]
    if index is not None and Path(os.path.realpath(index)) in folders:
        raise ValueError(
            f"--out {out} is the index folder {index} or lies inside it; results would be "
            f"written into the index. Choose another --out"
        )
    for folder in folders:
        if has_index_manifest(folder):
            raise ValueError(
                f"--out {out} is the index folder {folder} or lies inside it; results would "
                f"be written into the index. Choose another --out"
            )
    if index is not None and not Path(index, MANIFEST_NAME).is_file():
        check_out_dir(index)


def write_outputs(
    out: Path,
    results: dict[str, dict[str, Any]],
    *,
    model: str,
    extra: dict[str, Any] | None = None,
    title: str = "QUEST evaluation",
    notes: str | None = None,
    figures: Sequence[Path] = (),
) -> None:
    """results.json per strategy, and for several strategies report.md and a plot."""
    out.mkdir(parents=True, exist_ok=True)
    if len(results) == 1:
        ((strategy, metrics),) = results.items()
        write_results(out, strategy=strategy, model=model, metrics=metrics, extra=extra)
        return
    for strategy, metrics in results.items():
        write_results(out / strategy, strategy=strategy, model=model, metrics=metrics, extra=extra)
    plot = plot_recall_by_template(results, out / "recall_by_template.png")
    write_report_md(out / "report.md", results, title=title, notes=notes, figures=[plot, *figures])


def print_table(
    results: dict[str, dict[str, Any]], metrics: Sequence[str] = ("R@20", "violation_rate")
) -> None:
    """Per-template table on standard output (which model, then one table per metric
    that some strategy filled; a metric no strategy could compute is named, not shown)."""
    models = {
        str(r.get("model")) for r in results.values() if isinstance(r, dict) and r.get("model")
    }
    if models:
        print(f"model: {', '.join(sorted(models))}")
    for metric in metrics:
        print(f"\n{metric} by template\n")
        print(format_table(results, (metric,)))
