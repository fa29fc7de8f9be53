"""``logic-rag demo``: logic queries answered on real text, next to plain dense retrieval.

The first thing a new user runs should be text they can read and judge, with answers that
are known exactly. So the demo indexes WordNet 3.0's noun glosses (birds, dogs, trees,
edible fruits, vegetables, reptiles: ~2,700 real definitions that ship with the package,
see :mod:`logic_rag.evals.wordnet_demo`) with the default dense model, then:

1. prints a few logic queries ("birds of prey that are not hawks") answered by plain dense
   retrieval (``vanilla``) and by the retriever's default strategy, each hit marked as in
   or out of WordNet's answer set and with its constraint verdicts (✓ / ✗ / ?);
2. measures both on ~155 queries of QUEST's templates: recall (R@20, R@100), precision of
   the first hit (P@1) and, for NOT queries, how many pages of the excluded kind reach the
   top 5 and how often they rank above the answers on average (violation rate), overall and
   per template, gains and losses alike;
3. writes ``report.md`` (opening with that comparison), ``results.json`` per strategy,
   ``recall_by_template.png`` and the index (``index/``).

The generated QUEST-format world stays for tests and benchmarks (``logic-rag world``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["run_demo", "verdict_mark", "DEMO_METRICS", "EXCLUDED_AT"]

#: The comparison's rows (terminal and report): metric, label, whether higher is better.
DEMO_METRICS: tuple[tuple[str, str, bool], ...] = (
    ("R@20", "R@20: share of the answers in the top 20", True),
    ("R@100", "R@100: share of the answers in the top 100", True),
    ("P@1", "P@1: first hit is an answer", True),
    ("excluded@5", "excluded pages in the top 5 (NOT queries, mean)", False),
    (
        "violation_rate",
        "violation rate (NOT queries: excluded pages rank above the answers)",
        False,
    ),
)
#: The depth at which pages of a NOT query's excluded kind are counted.
EXCLUDED_AT = 5
#: Changes smaller than this are reported as unchanged.
_MOVE = 0.005
_LEGEND = (
    "+ = in WordNet's answer set, - = not; verdicts per constraint: ✓ holds, ✗ fails, ? unsure"
)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def verdict_mark(value: object) -> str:
    """✓ for True, ✗ for False, ? for None (unsure); plain bools and numpy bools work."""
    if value is None:
        return "?"
    return "✓" if bool(value) else "✗"


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _hit_lines(hits: Sequence[Any], gold: frozenset[str], *, verdicts: bool) -> list[str]:
    lines = []
    for hit in hits:
        mark = "+" if hit.id in gold else "-"
        name = _short(hit.title.split(",")[0], 28)
        line = f"  {mark} {hit.rank:>2}. {name:<28} {_short(hit.text, 58)}"
        if verdicts and hit.constraints:
            checks = "  ".join(f"{c} {verdict_mark(v)}" for c, v in hit.constraints.items())
            line += f"\n{'':<9}[{checks}]"
        lines.append(line)
    return lines


def _showcase(
    retriever: Any,
    queries: Sequence[Any],
    default: str,
    k: int,
    categories: Mapping[str, frozenset[str]] | None = None,
) -> tuple[list[str], dict[str, dict[str, int]], dict[str, int]]:
    """The terminal block for the showcase queries, how many of each top ``k`` are in the
    answer set, and (per strategy) how many hits of NOT queries belong to the excluded kind."""
    from logic_rag.query import render

    lines: list[str] = [_LEGEND]
    right: dict[str, dict[str, int]] = {}
    excluded: dict[str, int] = {"vanilla": 0, default: 0}
    for query in queries:
        logic = render(retriever.decompose(query.query).query)
        lines += ["", f'"{query.query}"  ->  {logic}   ({len(query.docs)} answers in WordNet)']
        right[query.query] = {}
        for strategy, label in (("vanilla", "plain dense retrieval"), (default, "logic-rag")):
            hits = retriever.search(query.query, k=k, strategy=strategy)
            n = sum(h.id in query.docs for h in hits)
            right[query.query][strategy] = n
            if query.template and query.template.endswith("not _") and categories is not None:
                kind = categories.get(query.atoms[-1], frozenset()) if query.atoms else frozenset()
                excluded[strategy] += sum(h.id in kind for h in hits)
            lines.append(f"  {label} ({strategy}): {n}/{len(hits)} in the answer set")
            lines += _hit_lines(hits, query.docs, verdicts=strategy != "vanilla")
    return lines, right, excluded


class _Recorder:
    """The retriever, remembering each search's top :data:`EXCLUDED_AT` ids (so that the
    demo counts excluded pages without searching twice)."""

    def __init__(self, retriever: Any) -> None:
        self._retriever = retriever
        self.top: dict[tuple[str, str], list[str]] = {}

    def __len__(self) -> int:
        return len(self._retriever)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._retriever, name)

    def search_batch(self, queries: Sequence[str], **kwargs: Any) -> Any:
        found = self._retriever.search_batch(queries, **kwargs)
        strategy = str(kwargs.get("strategy"))
        for text, hits in zip(queries, found, strict=True):
            self.top[(strategy, text)] = [h.id for h in hits[:EXCLUDED_AT]]
        return found


def _add_excluded(
    results: dict[str, dict[str, Any]],
    recorder: _Recorder,
    queries: Sequence[Any],
    atom_sets: Mapping[str, frozenset[str]],
) -> None:
    """Add ``excluded@5`` (mean pages of the excluded kind in the top 5 of each NOT query;
    None where a template has no NOT) to every strategy's overall and per-template block."""
    from logic_rag.evals.quest.violation import excluded_docs

    for strategy, block in results.items():
        counts: dict[str, list[int]] = {}
        for query in queries:
            excluded = excluded_docs(query, atom_sets)
            if excluded is None:
                continue
            top = recorder.top.get((strategy, query.query), [])
            counts.setdefault(query.template, []).append(sum(d in excluded for d in top))
        every = [c for group in counts.values() for c in group]
        block["all"]["excluded@5"] = sum(every) / len(every) if every else None
        for template, agg in block["by_template"].items():
            group = counts.get(template)
            agg["excluded@5"] = sum(group) / len(group) if group else None


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _change(before: Any, after: Any, higher_is_better: bool) -> str:
    """``+0.117 better`` / ``-0.023 worse`` / ``same`` / ``–``."""
    if before is None or after is None:
        return "–"
    delta = after - before
    if abs(delta) < _MOVE:
        return "same"
    better = (delta > 0) == higher_is_better
    return f"{delta:+.3f} {'better' if better else 'worse'}"


def _headline_table(results: Mapping[str, Mapping[str, Any]], default: str) -> str:
    """Markdown: one row per :data:`DEMO_METRICS` over all queries, both strategies and
    the change."""
    rows = [
        ["metric", "`vanilla`", f"`{default}`", "change"],
        ["---", "---:", "---:", "---"],
    ]
    for key, label, higher in DEMO_METRICS:
        before, after = results["vanilla"]["all"].get(key), results[default]["all"].get(key)
        rows.append([label, _num(before), _num(after), _change(before, after, higher)])
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def _template_table(results: Mapping[str, Mapping[str, Any]], default: str) -> str:
    """Markdown: per template, ``vanilla -> default`` for every metric of
    :data:`DEMO_METRICS` (– where it does not apply)."""
    keys = [key for key, _, _ in DEMO_METRICS]
    rows = [["template", "n", *keys], ["---", "---:", *["---:"] * len(keys)]]
    groups = [("all", results["vanilla"]["all"])]
    groups += sorted(results["vanilla"]["by_template"].items())
    for name, block in groups:
        row = [f"`{name}`" if name != "all" else "**all**", str(block.get("n", ""))]
        for key in keys:
            before = block.get(key)
            source = results[default]["all"] if name == "all" else results[default]["by_template"]
            after = source.get(key) if name == "all" else source[name].get(key)
            row.append("–" if before is None else f"{_num(before)} → {_num(after)}")
        rows.append(row)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def _wins_and_losses(
    results: Mapping[str, Mapping[str, Any]], default: str
) -> tuple[list[str], list[str]]:
    """Per template and metric, where ``default`` does better or worse than ``vanilla``."""
    wins, losses = [], []
    for template, block in sorted(results[default]["by_template"].items()):
        base = results["vanilla"]["by_template"][template]
        for key, _, higher in DEMO_METRICS:
            before, after = base.get(key), block.get(key)
            if before is None or after is None or abs(after - before) < _MOVE:
                continue
            said = f"`{template}` {key} {before:.3f} → {after:.3f}"
            (wins if (after > before) == higher else losses).append(said)
    return wins, losses


def run_demo(
    out: str | Path = "runs/demo",
    *,
    model: str | None = None,
    wordnet_dir: str | Path | None = None,
    per_template: int = 30,
    seed: int = 0,
    show: int = 5,
    roots: Sequence[tuple[str, str]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run the demo; returns ``{"vanilla": metrics, default_strategy: metrics}``.

    ``model`` is the dense model (default: :func:`~logic_rag.models.default_dense_model`);
    ``wordnet_dir`` a full WordNet 3.0 (default: the glosses that ship with the package);
    ``per_template`` sizes the sampled queries of each template, ``show`` the hits printed
    per showcase query; ``roots`` replaces the corpus's root synsets (tests use a small
    one). A missing WordNet fails before any model loads, in one line.
    """
    from logic_rag.atomic import atomic_write_text
    from logic_rag.evals.quest.runner import evaluate_strategies, write_outputs
    from logic_rag.evals.wordnet_demo import MAX_MEASURED, ROOTS, load_wordnet_demo
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.models import default_dense_model

    if per_template < 1 or show < 1:
        raise ValueError(f"per_template and show must be at least 1, got {per_template}, {show}")
    out = Path(out)
    started = time.perf_counter()
    roots = tuple(roots or ROOTS)
    data = load_wordnet_demo(wordnet_dir, per_template=per_template, seed=seed, roots=roots)
    model = model or default_dense_model()
    _log(
        f"[demo] WordNet 3.0: {len(data.documents):,} glosses, {len(data.queries)} queries with "
        f"known answer sets; indexing with {model} (a few minutes on 2 cores)"
    )
    t = time.perf_counter()
    retriever = LogicRetriever.build(data.documents, model=model, show_progress_bar=True)
    index_seconds = time.perf_counter() - t
    retriever.save(out / "index")
    default = retriever.strategy if isinstance(retriever.strategy, str) else "rerank"
    _log(f"[demo] indexed in {index_seconds:.0f}s -> {out / 'index'}")

    lines, right, excluded = _showcase(retriever, data.showcase, default, show, data.categories)
    print("\n".join(lines), flush=True)

    strategies = ("vanilla", default)
    t = time.perf_counter()
    recorder = _Recorder(retriever)
    atom_sets = dict(data.categories)
    results = evaluate_strategies(
        recorder, data.queries, strategies, atom_sets=atom_sets, progress=False
    )
    _add_excluded(results, recorder, data.queries, atom_sets)
    eval_seconds = time.perf_counter() - t
    headline = _headline_table(results, default)
    by_template = _template_table(results, default)
    wins, losses = _wins_and_losses(results, default)
    n_not = sum(1 for q in data.queries if q.template and q.template.endswith("not _"))
    print(
        f"\n`vanilla` (plain dense retrieval) against `{default}` (logic-rag's default) on "
        f"{len(data.queries)} queries with known answer sets ({n_not} with a NOT)\n\n"
        f"{headline}\n\nBy template (vanilla → {default}):\n\n{by_template}\n",
        flush=True,
    )

    seconds = time.perf_counter() - started
    write_outputs(
        out,
        results,
        model=model,
        extra={"corpus": "WordNet 3.0 noun glosses", "seed": seed, "queries": len(data.queries)},
        title="logic-rag demo",
        notes=None,
    )
    wins_text = "; ".join(wins) if wins else "none"
    losses_text = "; ".join(losses) if losses else "none"
    showcase_wins = sum(r[default] > r["vanilla"] for r in right.values())
    showcase_losses = sum(r[default] < r["vanilla"] for r in right.values())
    head = "\n".join(
        [
            "# logic-rag demo: logic queries on WordNet's definitions",
            "",
            "## What to look at",
            "",
            f"Plain dense retrieval (`vanilla`) against logic-rag's default strategy "
            f"(`{default}`), both over the same {len(data.documents):,} WordNet glosses with "
            f"{model}, on {len(data.queries)} queries whose answer sets WordNet gives exactly "
            f"({n_not} of them with a NOT). Higher is better for R@k and P@1; lower is better "
            f"for the two NOT rows.",
            "",
            headline,
            "",
            f"- **Where `{default}` does better** (per template, changes of {_MOVE} or more): "
            f"{wins_text}.",
            f"- **Where it does worse:** {losses_text}.",
            f"- **The showcase below:** `{default}` had more answers in its top {show} on "
            f"{showcase_wins} of {len(right)} queries and fewer on {showcase_losses}; in the top "
            f"{show} of its NOT queries `vanilla` returned {excluded['vanilla']} pages of the "
            f"excluded kind and `{default}` {excluded[default]}. Each hit of `{default}` shows "
            f"its constraint verdicts (✓ holds, ✗ fails, ? unsure): read them against the "
            f"gloss beside them.",
            f'- **Reproduce or explore:** `logic-rag search {out / "index"} "owls or eagles" '
            f"--explain`.",
            "",
            f"## By template (`vanilla` → `{default}`)",
            "",
            "Each row rests on its n queries: one query moves P@1 by 1/n. – : the "
            "metric does not apply (no NOT in the template).",
            "",
            by_template,
            "",
            "## Showcase",
            "",
            "```text",
            *lines,
            "```",
            "",
            "## How it was run",
            "",
            f"WordNet 3.0 noun synsets at or below {', '.join(w for _, w in roots)} "
            f"({len(data.documents):,} documents: lemmas as the title, the gloss as the "
            f"text). A category is a synset with every synset below it (hyponym closure), "
            f"named by its first lemma in the plural; answer sets are set algebra over those "
            f"closures, so they are exact for this corpus. {len(data.queries)} queries: the "
            f"showcase (those with at most {MAX_MEASURED} answers) plus a seeded sample "
            f"(seed {seed}) of each template. Queries decomposed by the rule decomposer. "
            f"Excluded pages of a NOT query are those of its positive categories that also "
            f"belong to the excluded one; the violation rate is the share of NOT queries "
            f"whose excluded pages rank above its answers on average (LogiCoL's measure). "
            f"Dense model {model}; indexing {index_seconds:.0f}s, evaluation "
            f"{eval_seconds:.0f}s, whole demo {seconds:.0f}s.",
            "",
            "## Full tables",
            "",
        ]
    )
    report = out / "report.md"
    body = report.read_text(encoding="utf-8").split("\n", 1)[1] if report.is_file() else ""
    atomic_write_text(report, head + body.lstrip() + ("\n" if not body.endswith("\n") else ""))
    _log(f"[demo] wrote {report} in {time.perf_counter() - started:.0f}s; open it first")
    return results
