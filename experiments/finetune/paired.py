"""Paired comparison of two encoders on one split: which queries each one gets wrong.

Why: the ablation's aggregate violation rates rest on a few dozen negation queries, so a
difference needs a paired test before it means anything. Both models rank the same
queries; for the negation violation (a yes/no per query) the discordant queries decide,
and an exact two-sided sign test (:func:`scipy.stats.binomtest`) says how likely such a
split is by chance; for R@20 / R@100 the mean per-query difference gets a paired bootstrap
interval (:func:`logic_rag.evals.rag.bootstrap.paired_bootstrap`), and so does the graded
view of the negation, ``pairwise_order`` (:func:`logic_rag.evals.quest.pairwise_order`: the
share of gold/excluded document pairs in the right order, 0.5 = negation ignored), over the
negation queries.

    python -m experiments.finetune.paired runs/ablation/data/wordnet \\
        runs/ablation/models/wordnet/supcon/model runs/ablation/models/wordnet/logicol/model

Several ``DATA FIRST SECOND`` triples (one per seed, say) are compared one by one and then
pooled (:func:`pool_tables`): the pooled sign test counts every discordant query of every
triple, and the pooled bootstrap resamples queries across triples. It treats the queries as
independent, which ignores that the queries of one triple share a pair of models; read it as
"over these seeds", not as a claim about unseen seeds. ``--by-template`` adds the same
comparison on each query template's queries alone (:func:`compare_by_template`), which shows
where an aggregate difference comes from.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "compare_by_template",
    "compare_per_query",
    "per_query_metrics",
    "pool_tables",
    "render_by_template",
    "violation_sign_test",
]

RECALL_MEASURES = ("R@20", "R@100")
#: Per-query measures that exist only for negation queries; a comparison over queries that
#: have none (a by-template row of "_ or _", say) leaves them out instead of failing.
NEGATION_MEASURES = ("pairwise_order",)
DEFAULT_MEASURES = RECALL_MEASURES + NEGATION_MEASURES


def per_query_metrics(
    model: str, data_dir: str | Path, split: str = "test", *, depth: int = 100
) -> dict[str, dict[str, Any]]:
    """``{qid: {"R@20", "R@100", "violation_rate" (1.0, 0.0 or None), ...}}`` of ``model``."""
    from experiments.finetune.metrics import ABLATION_KS
    from experiments.finetune.search import DocumentIndex, load_encoder, search_queries
    from logic_rag.evals.quest.data import load_atom_sets, load_quest_queries
    from logic_rag.evals.quest.metrics import evaluate_run
    from logic_rag.finetune.data import load_documents_map

    data_dir = Path(data_dir)
    documents = load_documents_map(data_dir / "documents.jsonl")
    atom_sets = load_atom_sets(data_dir / "atoms.jsonl")
    queries = load_quest_queries(data_dir / f"{split}.jsonl")
    encoder = load_encoder(model)
    index = DocumentIndex(list(documents), list(documents.values()), encoder)
    _, run = search_queries(encoder, index, queries, depth)
    result = evaluate_run(run, queries, atom_sets, ks=ABLATION_KS, mrecall_ks=(), set_cutoff=None)
    return result["per_query"]


def violation_sign_test(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """Discordant negation violations of two per-query tables and the exact sign test.

    Only queries where both tables have a violation flag count. ``p_value`` is the two-sided
    exact binomial test of "fixed" against "broken" with p = 1/2 (1.0 when none differ).
    """
    from scipy.stats import binomtest

    shared = [
        q
        for q in first
        if q in second
        and first[q].get("violation_rate") is not None
        and second[q].get("violation_rate") is not None
    ]
    v1 = {q: bool(first[q]["violation_rate"]) for q in shared}
    v2 = {q: bool(second[q]["violation_rate"]) for q in shared}
    fixed = sum(v1[q] and not v2[q] for q in shared)
    broken = sum(v2[q] and not v1[q] for q in shared)
    n = fixed + broken
    p_value = binomtest(fixed, n, 0.5).pvalue if n else 1.0
    return {
        "n": len(shared),
        "violations_first": sum(v1.values()),
        "violations_second": sum(v2.values()),
        "fixed": fixed,
        "broken": broken,
        "p_value": float(p_value),
    }


def _require_same_queries(first: Mapping[str, Any], second: Mapping[str, Any]) -> None:
    if set(first) != set(second):
        raise ValueError("the two per-query tables cover different queries; use the same split")


def compare_per_query(
    first: Mapping[str, Mapping[str, Any]],
    second: Mapping[str, Mapping[str, Any]],
    *,
    measures: Sequence[str] = DEFAULT_MEASURES,
    n_boot: int = 5000,
    seed: int = 0,
) -> dict[str, Any]:
    """Sign test on violations plus paired bootstrap (second - first) per measure.

    A measure of :data:`NEGATION_MEASURES` that no query has on both sides is left out.
    """
    from dataclasses import asdict

    from logic_rag.evals.rag.bootstrap import paired_bootstrap

    _require_same_queries(first, second)
    qids = sorted(first)
    out: dict[str, Any] = {"violation": violation_sign_test(first, second)}
    for name in measures:
        a = [first[q].get(name) for q in qids]
        b = [second[q].get(name) for q in qids]
        if name in NEGATION_MEASURES and all(
            x is None or y is None for x, y in zip(a, b, strict=True)
        ):
            continue
        out[name] = asdict(paired_bootstrap(a, b, n_boot=n_boot, seed=seed))
    return out


def compare_by_template(
    first: Mapping[str, Mapping[str, Any]],
    second: Mapping[str, Mapping[str, Any]],
    *,
    measures: Sequence[str] = DEFAULT_MEASURES,
    n_boot: int = 5000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """:func:`compare_per_query` on each query template's queries (``"_ or _"``, ...).

    Why: an aggregate recall difference can hide where it comes from; LogiCoL's R@100 cost,
    for one, sits in the large-set templates (unions and negations), not in the atoms.
    Queries without a template are grouped under ``"?"``.
    """
    _require_same_queries(first, second)
    templates: dict[str, list[str]] = {}
    for qid in sorted(first):
        templates.setdefault(first[qid].get("template") or "?", []).append(qid)
    return {
        template: compare_per_query(
            {q: first[q] for q in qids},
            {q: second[q] for q in qids},
            measures=measures,
            n_boot=n_boot,
            seed=seed,
        )
        for template, qids in sorted(templates.items())
    }


def render_by_template(by_template: Mapping[str, Mapping[str, Any]]) -> str:
    """One line per template: query count, recall differences with intervals, violations."""
    lines = []
    for template, result in by_template.items():
        cells = []
        for name, r in result.items():
            if name != "violation":
                cells.append(f"{name} {r['diff']:+.3f} ({r['low']:+.3f} .. {r['high']:+.3f})")
        v = result["violation"]
        if v["n"]:
            cells.append(f"violating {v['violations_first']} -> {v['violations_second']}")
        n = next((r["n"] for name, r in result.items() if name != "violation"), 0)
        lines.append(f"  {template!r} (n = {n}): " + "; ".join(cells))
    return "\n".join(lines)


def pool_tables(tables: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One per-query table from several, each query id prefixed by its table's position.

    Query ids repeat across seeds of one dataset (``test:q17`` in every build), so the prefix
    keeps them apart: ``{"0:test:q17": ..., "1:test:q17": ...}``.
    """
    return {f"{i}:{qid}": row for i, table in enumerate(tables) for qid, row in table.items()}


def render(result: Mapping[str, Any], first: str, second: str) -> str:
    """A few lines of plain text for the terminal."""
    v = result["violation"]
    lines = [
        f"first:  {first}",
        f"second: {second}",
        f"violation: {v['violations_first']} -> {v['violations_second']} of {v['n']} negation "
        f"queries; fixed {v['fixed']}, broken {v['broken']}; two-sided sign test "
        f"p = {v['p_value']:.4f}",
    ]
    for name, r in result.items():
        if name != "violation":
            lines.append(
                f"{name}: {r['mean_a']:.3f} -> {r['mean_b']:.3f} (diff {r['diff']:+.4f}, "
                f"95% CI {r['low']:+.4f} .. {r['high']:+.4f}, n = {r['n']})"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Paired comparison of two encoders on a QUEST-format split: sign test on "
        "negation violations, bootstrap intervals on R@20, R@100 and the negation's pairwise "
        "order."
    )
    parser.add_argument(
        "triples",
        nargs="+",
        metavar="DATA FIRST SECOND",
        help="a data folder (documents.jsonl, atoms.jsonl, SPLIT.jsonl), the baseline and the "
        "candidate (registry names or model folders); repeat the triple (one per seed) to get "
        "each comparison and the pooled one",
    )
    parser.add_argument("--split", default="test")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--by-template",
        action="store_true",
        help='also compare the queries of each template ("_ or _", ...) on their own',
    )
    args = parser.parse_args(argv)
    if len(args.triples) % 3:
        parser.error(
            f"expected DATA FIRST SECOND triples, got {len(args.triples)} arguments "
            f"({len(args.triples) % 3} left over)"
        )
    triples = [tuple(args.triples[i : i + 3]) for i in range(0, len(args.triples), 3)]
    firsts, seconds, results = [], [], []
    for data_dir, first, second in triples:
        a, b = (
            per_query_metrics(m, data_dir, args.split, depth=args.depth) for m in (first, second)
        )
        firsts.append(a)
        seconds.append(b)
        results.append(_compare(a, b, args.by_template))
        if not args.json:
            print(_render(results[-1], first, second), end="\n\n", flush=True)
    pooled = (
        _compare(pool_tables(firsts), pool_tables(seconds), args.by_template)
        if len(triples) > 1
        else None
    )
    if args.json:
        print(json.dumps({"comparisons": results, "pooled": pooled}, indent=2))
    elif pooled is not None:
        n = len(triples)
        print(_render(pooled, f"pooled baselines ({n})", f"pooled candidates ({n})"))
    return 0


def _compare(
    first: Mapping[str, Mapping[str, Any]],
    second: Mapping[str, Mapping[str, Any]],
    by_template: bool,
) -> dict[str, Any]:
    result = compare_per_query(first, second)
    if by_template:
        result["by_template"] = compare_by_template(first, second)
    return result


def _render(result: Mapping[str, Any], first: str, second: str) -> str:
    overall = {k: v for k, v in result.items() if k != "by_template"}
    text = render(overall, first, second)
    if "by_template" in result:
        text += "\nby template (second - first):\n" + render_by_template(result["by_template"])
    return text


if __name__ == "__main__":
    raise SystemExit(main())
