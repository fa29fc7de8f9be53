"""Certified top-k verification on QUEST-attr dev: R@k against LLM calls, beside its peers.

Reproduces ``docs/experiments/2026-11-28-certified-top-k.md``::

    python -m experiments.quality_curve --out runs/quality-curve --model minilm \\
        --llm qwen2.5-1.5b --per-template 1 --ks 5,20 --budgets 10,20,40,none

On the dev side of ``logic_rag.evals.quest.split.split_by_atom`` (seed 0, half the
queries; the subsample is fixed by its flags before anything is searched and written to
``OUT/queries.json``), each query is searched alone at the caller's ``k`` with:

* ``vanilla`` and ``rerank``: no LLM, for reference;
* ``quality`` (hard bounds) at each ``k`` and each per-query budget
  (``quality_max_calls``; ``none``: until the top k is certified, which is exactly the
  all-pairs top k over the whole pool);
* ``verify`` with the LLM on every positive atom of the best ``--all-pairs-top`` pages
  (the all-pairs reference the issue compares with);
* ``llm-rerank`` (one whole-query check per page) at equal calls: ``llm_rerank_top`` is
  the mean calls per query of each ``quality`` run, rounded.

Why a verdict file: an LLM check costs seconds on a CPU, and the runs above ask many of
the same (constraint, page) pairs. ``OUT/verdicts.json`` keeps every raw score the LLM
gave, keyed by (constraint, SHA-1 of the text shown), and pre-fills the verifier's pair
cache on the next run, so a rerun (or a run stopped and started again) asks nothing twice.
Calls are counted as the pipelines ask them (a cached answer still counts as a call of the
run that asked it); seconds are wall time and are only a cost where ``new_checks`` is not
zero. Runs go cheapest first and ``OUT/results.json`` is rewritten after each, so a run
stopped at a deadline keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from logic_rag.verifiers.cache import PairCache

__all__ = ["SavedVerdicts", "Run", "plan_runs", "measure", "dev_queries", "train_queries", "main"]

PROG = "quality_curve"


class SavedVerdicts(PairCache):
    """A pair cache that starts from a JSON file and writes each new score back to it.

    The file holds one verifier's raw scores (its fingerprint names the model and
    prompt); a file written for another verifier is refused rather than mixed in.
    """

    def __init__(self, path: str | Path, fingerprint: str) -> None:
        super().__init__(max_entries=10_000_000)
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.saved: dict[tuple[str, str], float] = {}
        if self.path.is_file():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("fingerprint") != fingerprint:
                raise ValueError(
                    f"{self.path} holds verdicts of another verifier "
                    f"({data.get('fingerprint') if isinstance(data, dict) else '?'}, "
                    f"not {fingerprint}): use another --out"
                )
            for atom, page_sha1, score in data.get("scores", []):
                self.saved[(str(atom), str(page_sha1))] = float(score)
            keys = list(self.saved)
            values = np.asarray([self.saved[k] for k in keys], dtype=np.float64)
            super().get_or_compute(fingerprint, keys, lambda missing: values[missing])
            self.hits = self.misses = 0

    def get_or_compute(
        self,
        fingerprint: str,
        pairs: Sequence[tuple[str, str]],
        compute: Callable[[list[int]], np.ndarray],
    ) -> np.ndarray:
        new: dict[tuple[str, str], float] = {}

        def remembered(missing: list[int]) -> np.ndarray:
            values = np.asarray(compute(missing), dtype=np.float64)
            for i, value in zip(missing, values.tolist(), strict=True):
                new[(pairs[i][0], pairs[i][1])] = value
            return values

        out = super().get_or_compute(fingerprint, pairs, remembered)
        if new and fingerprint == self.fingerprint:
            self.saved.update(new)
            self.save()
        return out

    def save(self) -> None:
        from logic_rag.atomic import atomic_write_json

        scores = [[a, d, v] for (a, d), v in sorted(self.saved.items())]
        atomic_write_json(
            self.path, {"fingerprint": self.fingerprint, "scores": scores}, indent=None
        )

    def lookups(self) -> int:
        """Pairs asked of this cache so far, answered from it or not."""
        return self.hits + self.misses


@dataclass(frozen=True)
class Run:
    """One pipeline at one ``k``: ``budget`` is quality's ``quality_max_calls``, ``top``
    llm-rerank's ``llm_rerank_top`` or verify's ``verifier_top``; ``equal_to`` names the
    quality run whose mean calls set ``top``."""

    strategy: str
    k: int
    budget: int | None = None
    top: int | None = None
    equal_to: str | None = None
    bounds: str = "hard"

    @property
    def name(self) -> str:
        if self.strategy == "quality":
            budget = self.budget if self.budget is not None else "none"
            bounds = "" if self.bounds == "hard" else f" {self.bounds}"
            return f"quality{bounds} k={self.k} budget={budget}"
        if self.strategy == "llm-rerank":
            if self.equal_to is None:
                return f"llm-rerank k={self.k} every candidate"
            return f"llm-rerank k={self.k} top={self.top} (calls of {self.equal_to})"
        if self.strategy == "verify":
            top = self.top if self.top is not None else "every candidate"
            return f"verify all-pairs top {top} k={self.k}"
        return f"{self.strategy} k={self.k}"


def plan_runs(
    ks: Sequence[int],
    budgets: Sequence[int | None],
    all_pairs_top: int,
    *,
    calibrated: bool = False,
    every_candidate: bool = False,
) -> list[Run]:
    """The runs, cheapest first: free ones, quality at the finite budgets and its peer,
    the all-pairs reference, then the unbounded budget and its peer; with ``calibrated``
    quality with calibrated bounds at every budget; with ``every_candidate`` the
    references over the whole pool (all pairs and the whole-query check of every page)."""
    finite = sorted(b for b in budgets if b is not None)
    runs: list[Run] = [Run("vanilla", k) for k in ks] + [Run("rerank", k) for k in ks]
    groups = [finite, [None] if None in budgets else []]
    for i, group in enumerate(groups):
        quality = [Run("quality", k, budget=b) for k in ks for b in group]
        runs += quality
        runs += [Run("llm-rerank", q.k, equal_to=q.name) for q in quality]
        if i == 0 and all_pairs_top:
            runs += [Run("verify", k, top=all_pairs_top) for k in ks]
    if calibrated:
        runs += [Run("quality", k, budget=b, bounds="calibrated") for k in ks for b in budgets]
    if every_candidate:
        runs += [Run("verify", k, top=None) for k in ks]
        runs += [Run("llm-rerank", k) for k in ks]
    return runs


def dev_queries(
    data: Path, *, per_template: int, seed: int = 0, dev_share: float = 0.5, side: str = "dev"
) -> list[Any]:
    """QUEST-attr dev queries (the atom-disjoint split), the first ``per_template`` of each
    template in file order (0: all): fixed before anything is searched. ``side="train"``
    gives the other side's (a second split to confirm what was chosen on dev)."""
    import tempfile

    from logic_rag.atomic import atomic_write_jsonl
    from logic_rag.evals.quest.data import load_quest_queries
    from logic_rag.evals.quest.split import read_records, split_by_atom

    split = split_by_atom(read_records(data / "train_dev.jsonl"), dev_share=dev_share, seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dev.jsonl"
        atomic_write_jsonl(path, split.dev if side == "dev" else split.train)
        queries = load_quest_queries(path)
    if not per_template:
        return queries
    seen: dict[str, int] = {}
    kept = []
    for q in queries:
        template = q.template or "?"
        if seen.get(template, 0) < per_template:
            seen[template] = seen.get(template, 0) + 1
            kept.append(q)
    return kept


def train_queries(data: Path, *, seed: int = 0, dev_share: float = 0.5) -> list[str]:
    """The query texts of the same split's train side (for fits: ``fit-cascade``)."""
    from logic_rag.evals.quest.split import read_records, split_by_atom

    split = split_by_atom(read_records(data / "train_dev.jsonl"), dev_share=dev_share, seed=seed)
    return [str(r["query"]) for r in split.train]


def _settings(
    run: Run, verifier: Any, thresholds: str | None = None, extra: dict[str, Any] | None = None
) -> Any:
    """The settings of ``run``'s strategy (None: its defaults); ``extra``: further
    :class:`~logic_rag.strategy_settings.QualitySettings` fields for ``quality`` runs."""
    from logic_rag.strategy_settings import LLMRerankSettings, QualitySettings, VerifySettings

    if run.strategy == "quality":
        calibrated = {"thresholds": thresholds} if run.bounds == "calibrated" else {}
        return QualitySettings(
            **{**(extra or {}), **calibrated},
            verifier=verifier,
            bounds=run.bounds,
            max_calls=run.budget,
        )
    if run.strategy == "llm-rerank":
        # With no top, every page of the pool (larger than any pool here).
        return LLMRerankSettings(verifier=verifier, top=int(run.top or 100_000))
    if run.strategy == "verify":
        return VerifySettings(verifier=verifier, verifier_top=run.top)
    return None


def measure(
    retriever: Any,
    verifier: Any,
    queries: Sequence[Any],
    run: Run,
    *,
    log: Callable[[str], None] = print,
    thresholds: str | None = None,
    quality_config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Search every query alone at ``run.k``; R@k, LLM calls and seconds per query.
    ``quality_config``: further QualitySettings fields for ``quality`` runs."""
    from logic_rag.evals.quest.metrics import evaluate_run

    settings = _settings(run, verifier, thresholds, quality_config)
    configured = retriever if settings is None else retriever.with_settings(settings)
    cache = verifier.cache
    scored = getattr(verifier, "stats", lambda: {})
    ranking: dict[str, list[tuple[str, float]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for i, q in enumerate(queries):
        lookups, new = cache.hits + cache.misses, scored().get("pairs", 0)
        began = time.perf_counter()
        hits = configured.search(q.query, k=run.k, strategy=run.strategy)
        seconds = time.perf_counter() - began
        ranking[q.qid] = [(h.id, float(h.score)) for h in hits]
        info = (hits[0].logic.get("llm") if hits and hits[0].logic else None) or {}
        asked = cache.hits + cache.misses - lookups
        rows[q.qid] = {
            "template": q.template,
            # quality and llm-rerank report their calls; verify's are the cache lookups.
            "calls": int(info.get("calls", asked)),
            "all_pairs_calls": info.get("all_pairs_calls"),
            "certified": info.get("certified"),
            "probability": info.get("probability"),
            "new_checks": scored().get("pairs", 0) - new,
            "seconds": round(seconds, 3),
        }
        log(f"{run.name}: {i + 1}/{len(queries)} {seconds:.1f} s, {rows[q.qid]['calls']} calls")
    scores = evaluate_run(ranking, list(queries), ks=(run.k,), mrecall_ks=(run.k,))
    key = f"R@{run.k}"
    for qid, row in rows.items():
        row[key] = scores["per_query"][qid][key]
    calls = [r["calls"] for r in rows.values()]
    certified = [r["certified"] for r in rows.values() if r["certified"] is not None]
    return {
        "strategy": run.strategy,
        "k": run.k,
        "budget": run.budget,
        "top": run.top,
        "equal_to": run.equal_to,
        key: scores["all"][key],
        "by_template": {t: b[key] for t, b in scores["by_template"].items()},
        "calls_mean": round(float(np.mean(calls)), 2) if calls else 0.0,
        "calls_max": max(calls) if calls else 0,
        "certified_share": round(float(np.mean(certified)), 3) if certified else None,
        "new_checks": int(sum(r["new_checks"] for r in rows.values())),
        "seconds_mean": round(float(np.mean([r["seconds"] for r in rows.values()])), 2),
        "per_query": rows,
    }


def table(results: dict[str, Any], templates: Sequence[str]) -> str:
    """The Markdown table of every finished run, with one column per template."""
    head = ["run", "R@k", "LLM calls/query", "certified", *templates]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in results.items():
        key = f"R@{r['k']}"
        cells = [
            name,
            f"{r[key]:.3f}",
            f"{r['calls_mean']:.1f}",
            "" if r["certified_share"] is None else f"{r['certified_share']:.2f}",
            *(f"{r['by_template'][t]:.3f}" if t in r["by_template"] else "" for t in templates),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _budget(text: str) -> int | None:
    if text.strip().lower() in ("none", "all", "inf"):
        return None
    value = int(text)
    if value < 1:
        raise ValueError(f"a budget must be >= 1 or 'none', got {text!r}")
    return value


def _retriever(args: argparse.Namespace, data: Path, log: Callable[[str], None]) -> Any:
    from logic_rag.logic_retriever import LogicRetriever

    if args.index:
        return LogicRetriever.load(args.index)
    folder = Path(args.out) / f"index-{args.model}"
    from logic_rag.index.store import has_index_manifest

    if has_index_manifest(folder):
        return LogicRetriever.load(folder)
    from logic_rag.corpus import load_documents

    began = time.perf_counter()
    retriever = LogicRetriever.build(load_documents(data / "documents.jsonl"), model=args.model)
    retriever.save(folder)
    log(f"index of {len(retriever)} pages built in {time.perf_counter() - began:.0f} s")
    return retriever


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="run folder (results, verdicts, index)")
    p.add_argument("--index", default=None, help="an index of QUEST-attr (default: build one)")
    p.add_argument("--model", default="minilm", help="encoder when the index is built")
    p.add_argument("--llm", default="qwen2.5-1.5b", help="generator spec of the LLM verifier")
    p.add_argument("--ks", default="5,20", help="the caller's k, comma-separated")
    p.add_argument("--budgets", default="10,20,40,none", help="quality_max_calls values")
    p.add_argument("--all-pairs-top", type=int, default=40, help="verify's verifier_top (0: skip)")
    p.add_argument("--per-template", type=int, default=1, help="dev queries per template (0: all)")
    p.add_argument("--only", default="", help="run only these strategies (comma-separated)")
    p.add_argument(
        "--replay",
        default=None,
        help="answer every check from this scores file (experiments.llm_relay) instead of --llm",
    )
    p.add_argument(
        "--fit-sample",
        type=int,
        default=0,
        help="also run quality with calibrated bounds, fitted by fit-cascade on this many "
        "pairs of the train side's queries (0: hard bounds only)",
    )
    p.add_argument(
        "--every-candidate",
        action="store_true",
        help="also the references over the whole pool (all pairs; llm-rerank of every page)",
    )
    p.add_argument(
        "--side",
        choices=["dev", "train"],
        default="dev",
        help="which side of the split to measure on (train: to confirm a dev choice)",
    )
    p.add_argument(
        "--quality-config",
        default="{}",
        help="JSON: further QualitySettings fields for quality runs, e.g. '{\"pool\": 40}'",
    )
    args = p.parse_args(argv)
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    try:
        ks = [int(k) for k in args.ks.split(",")]
        budgets = [_budget(b) for b in args.budgets.split(",")]
        if any(k < 1 for k in ks) or args.per_template < 0 or args.all_pairs_top < 0:
            raise ValueError("k, --per-template and --all-pairs-top must be positive")
        from logic_rag.paths import shared_data_dir

        data = shared_data_dir() / "quest" / "attr"
        if not (data / "train_dev.jsonl").is_file():
            raise ValueError(f"QUEST-attr data not found in {data}")
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        from logic_rag.verifiers.llm import LLMVerifier

        generator: Any = args.llm
        if args.replay:
            from experiments.llm_relay import ReplayGenerator

            generator = ReplayGenerator([args.replay], name=f"relay:{Path(args.replay).name}")
        fingerprint = LLMVerifier(generator=generator).fingerprint()
        cache = SavedVerdicts(out / "verdicts.json", fingerprint)
    except (ValueError, OSError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    from logic_rag.atomic import atomic_write_json, atomic_write_text

    queries = dev_queries(data, per_template=args.per_template, side=args.side)
    atomic_write_json(
        out / "queries.json",
        {
            "chosen": f"first {args.per_template or 'all'} per template of the seed-0 "
            f"{args.side} side",
            "queries": [{"qid": q.qid, "template": q.template, "query": q.query} for q in queries],
        },
    )
    templates = sorted({q.template or "?" for q in queries})
    retriever = _retriever(args, data, log)
    verifier = LLMVerifier(generator=generator, cache=cache)
    thresholds = None
    if args.fit_sample:
        from logic_rag.strategy_settings import QualitySettings
        from logic_rag.verifiers.cascade import fit_cascade

        thresholds = str(out / f"fit-{args.fit_sample}.json")
        if not Path(thresholds).is_file():
            fit_cascade(
                retriever.with_settings(QualitySettings(verifier=verifier)),
                train_queries(data),
                thresholds,
                sample_size=args.fit_sample,
            )
    only = set(filter(None, args.only.split(",")))
    results: dict[str, Any] = {}
    if (out / "results.json").is_file():  # a stopped run keeps what it measured
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))["runs"]
    settings = {**vars(args), "queries": len(queries), "documents": len(retriever)}
    runs = plan_runs(
        ks,
        budgets,
        args.all_pairs_top,
        calibrated=bool(args.fit_sample),
        every_candidate=args.every_candidate,
    )
    for run in runs:
        if only and run.strategy not in only:
            continue
        if run.strategy == "llm-rerank" and run.equal_to is not None:
            if run.equal_to not in results:
                continue
            mean = results[run.equal_to]["calls_mean"]
            run = Run("llm-rerank", run.k, top=max(1, int(round(mean))), equal_to=run.equal_to)
        if run.name in results:
            continue
        results[run.name] = measure(
            retriever,
            verifier,
            queries,
            run,
            log=log,
            thresholds=thresholds,
            quality_config=json.loads(args.quality_config),
        )
        shown = {k: v for k, v in results[run.name].items() if k != "per_query"}
        log(json.dumps({run.name: shown}))
        atomic_write_json(out / "results.json", {"settings": settings, "runs": results})
        atomic_write_text(out / "table.md", table(results, templates) + "\n")
    print(table(results, templates))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
