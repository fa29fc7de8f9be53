"""``logic-rag demo``: the whole product on a generated world, in a few minutes on 2 cores.

1. generate a QUEST-format world (~3,000 entities, ~350 test queries);
2. index it with MiniLM (document and sentence vectors) and SPLADE-tiny;
3. run every strategy on the test queries, decomposed by the rule decomposer;
4. the old default (``rerank`` over MiniLM) next to the new one (``rerank`` over
   EmbeddingGemma-300M) on a smaller world of the same generator, since Gemma embeds
   ~20x slower than MiniLM on CPU and the whole demo must stay within 10 minutes;
5. print per-template tables and write ``report.md``, ``results.json`` per strategy,
   ``recall_by_template.png`` and ``similarity_scatter.png`` (LogiCoL's Figure 2: each
   document's similarity to "A and B" against "A but not B").
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["run_demo", "DEMO_STRATEGIES"]

DEMO_STRATEGIES = (
    "vanilla",
    "rerank",
    "setops",
    "fusion",
    "orthogonal",
    "splade",
    "splade-compose",
    "splade-nrf",
)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _scatter(retriever: Any, world_dir: Path, split: str, out: Path) -> Path | None:
    """Pick two atoms that overlap well and plot document similarities to A∧B and A∖B."""
    import numpy as np

    from logic_rag.evals.quest.report import plot_similarity_scatter

    atoms = [json.loads(line) for line in (world_dir / "atoms.jsonl").open(encoding="utf-8")]
    atoms = [a for a in atoms if a.get("split", split) == split]
    best = None
    for a in atoms:
        set_a = set(a["docs"])
        for b in atoms:
            if a is b or a["domain"] != b["domain"]:
                continue
            both, only = set_a & set(b["docs"]), set_a - set(b["docs"])
            score = min(len(both), len(only))
            if score >= 3 and (best is None or score > best[0]):
                best = (score, a, b)
    if best is None:
        return None
    _, a, b = best
    texts = [f"{a['atom']} that are also {b['atom']}", f"{a['atom']} that are not {b['atom']}"]
    q = retriever.dense.encoder.encode_queries(texts)
    set_a, set_b = set(a["docs"]), set(b["docs"])
    rows = retriever._rows_by_id()
    shown = sorted(set_a | set_b)
    rng = np.random.default_rng(0)
    others = [d.id for d in retriever.documents if d.id not in set_a | set_b]
    shown += list(rng.choice(others, size=min(150, len(others)), replace=False))
    vectors = retriever._doc_vectors()[[rows[d] for d in shown]]
    sims = vectors @ q.T

    def group(doc: str) -> str:
        if doc in set_a and doc in set_b:
            return "A∩B (gold for 'A and B')"
        if doc in set_a:
            return "A∖B (gold for 'A but not B')"
        return "B∖A" if doc in set_b else "other"

    return plot_similarity_scatter(
        sims[:, 0].tolist(),
        sims[:, 1].tolist(),
        [group(d) for d in shown],
        out / "similarity_scatter.png",
        title=f"A = {a['atom']}, B = {b['atom']} ({retriever.dense.encoder.name})",
    )


def _world(world_dir: Path, entities: int, test_queries: int, seed: int) -> tuple[Any, Any, Any]:
    """Generate and write a QUEST-format world; its documents, test queries and atom sets."""
    from logic_rag.corpus import load_documents
    from logic_rag.evals.quest.data import load_atom_sets, load_quest_queries
    from logic_rag.evals.world import WorldConfig, generate_world, write_world

    config = WorldConfig(
        n_entities=entities,
        n_queries_per_split={"train": 0, "val": 0, "test": test_queries},
        seed=seed,
    )
    write_world(generate_world(config), world_dir)
    return (
        load_documents(world_dir / "documents.jsonl"),
        load_quest_queries(world_dir / "test.jsonl"),
        load_atom_sets(world_dir / "atoms.jsonl"),
    )


def _default_comparison(
    out: Path, *, entities: int, test_queries: int, seed: int, old: str, new: str
) -> dict[str, dict[str, Any]] | None:
    """``vanilla`` and ``rerank`` over the old and the new default model on one small world.

    Returns ``{"rerank-minilm": metrics, ...}``, or None (with a message) when the new
    default model is not assembled on this machine.
    """
    from logic_rag.errors import ModelNotFoundError
    from logic_rag.evals.quest.runner import evaluate_strategies
    from logic_rag.logic_retriever import LogicRetriever

    docs, queries, atom_sets = _world(out / "world-small", entities, test_queries, seed)
    results: dict[str, dict[str, Any]] = {}
    for model in (old, new):
        t = time.perf_counter()
        try:
            retriever = LogicRetriever.build(docs, model=model, show_progress_bar=True)
        except ModelNotFoundError as error:
            _log(f"[demo] skipping the default-model comparison: {error}")
            return None
        _log(
            f"[demo] small world ({len(docs):,} documents) indexed with {model} in "
            f"{time.perf_counter() - t:.0f}s"
        )
        for strategy, metrics in evaluate_strategies(
            retriever, queries, ("vanilla", "rerank"), atom_sets=atom_sets
        ).items():
            results[f"{strategy}-{model}"] = metrics
    return results


def _append_comparison(report: Path, comparison: Path) -> None:
    """Add the default-model comparison to the main report (as a section)."""
    if not report.is_file() or not comparison.is_file():
        return
    from logic_rag.atomic import atomic_write_text

    body = comparison.read_text(encoding="utf-8").replace(
        "(recall_by_template.png)", "(defaults/recall_by_template.png)"
    )
    text = report.read_text(encoding="utf-8").rstrip() + "\n\n## Old default vs new default\n\n"
    atomic_write_text(report, text + body.split("\n", 1)[1].lstrip() + "\n")


def run_demo(
    out: str | Path = "runs/demo",
    *,
    entities: int = 3000,
    test_queries: int = 350,
    model: str = "minilm",
    sparse: bool = True,
    strategies: tuple[str, ...] = DEMO_STRATEGIES,
    seed: int = 0,
    compare_entities: int = 500,
) -> dict[str, Any]:
    """Run the demo; returns ``{strategy: metrics}``.

    ``compare_entities`` sizes the world on which the old default (``rerank`` over
    MiniLM) meets the new one (``rerank`` over EmbeddingGemma-300M); 0 skips it.
    """
    from logic_rag.evals.quest.runner import evaluate_strategies, print_table, write_outputs
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.query import render

    out = Path(out)
    started = time.perf_counter()
    world_dir = out / "world"
    docs, queries, atom_sets = _world(world_dir, entities, test_queries, seed)
    _log(f"[demo] world: {len(docs):,} documents, {len(queries)} test queries -> {world_dir}")

    if not sparse:
        strategies = tuple(s for s in strategies if not s.startswith("splade"))
    t = time.perf_counter()
    retriever = LogicRetriever.build(
        docs, model=model, sparse_model="splade-tiny" if sparse else None, show_progress_bar=True
    )
    retriever.save(out / "index")
    _log(
        f"[demo] indexed with {model}{' + splade-tiny' if sparse else ''} in {time.perf_counter() - t:.0f}s"
    )

    example = next((q for q in queries if q.template == "_ that are also _ but not _"), queries[0])
    _log(f"\n[demo] example: {example.query!r}")
    _log(f"[demo] decomposed: {render(retriever.decompose(example.query).query)}")
    for strategy in [
        s for s in ("vanilla", "rerank", "setops", "splade-compose") if s in strategies
    ]:
        _log(f"[demo] top 5 by {strategy} (* = in the gold set):")
        for hit in retriever.search(example.query, k=5, strategy=strategy):
            mark = "*" if hit.id in example.docs else " "
            failed = [name for name, ok in hit.constraints.items() if not ok]
            why = f"  fails: {', '.join(failed)}" if failed else ""
            _log(f"  {mark} {hit.rank}. {hit.title:<38} {hit.score:7.3f}{why}")

    results = evaluate_strategies(retriever, queries, strategies, atom_sets=atom_sets)
    scatter = _scatter(retriever, world_dir, "test", out)
    notes = (
        f"Generated world: {len(docs):,} documents, {len(queries)} test queries "
        f"(seed {seed}); dense model {model}; queries decomposed by the rule decomposer. "
        f"Default strategy: rerank. Ran in {time.perf_counter() - started:.0f}s."
    )
    write_outputs(
        out,
        results,
        model=model,
        extra={"world": str(world_dir), "seed": seed},
        title="logic-rag demo",
        notes=notes,
        figures=[scatter] if scatter else [],
    )
    print_table(results)
    if compare_entities:
        from logic_rag.models import DEFAULT_DENSE_MODEL, FAST_DENSE_MODEL

        comparison = _default_comparison(
            out / "defaults",
            entities=compare_entities,
            test_queries=max(20, test_queries // 2),
            seed=seed,
            old=FAST_DENSE_MODEL,
            new=DEFAULT_DENSE_MODEL,
        )
        if comparison:
            write_outputs(
                out / "defaults",
                comparison,
                model=f"{FAST_DENSE_MODEL} vs {DEFAULT_DENSE_MODEL}",
                extra={"seed": seed, "entities": compare_entities},
                title="logic-rag demo: the old default next to the new one",
                notes=(
                    f"Old default: rerank over {FAST_DENSE_MODEL}. New default: rerank over "
                    f"{DEFAULT_DENSE_MODEL}. Both on the same generated world of "
                    f"{compare_entities} entities (smaller than the main one so that the "
                    "slower model fits the demo's time budget on 2 cores)."
                ),
            )
            print_table(comparison, metrics=("R@20",))
            _append_comparison(out / "report.md", out / "defaults" / "report.md")
    _log(
        f"\n[demo] wrote {out / 'report.md'} and results.json per strategy in {time.perf_counter() - started:.0f}s"
    )
    return results
