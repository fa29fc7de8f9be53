"""Entailment tuning at a measurable size: base vs entailment-tuned encoder, zero-shot.

Why this experiment: the first comparison (:mod:`.experiment`) had 13 MS MARCO test
queries, near the ceiling, so any difference under ~0.08 was noise. Here the *direct*
effect of entailment tuning is measured (no contrastive step in between: both arms are
used as they are) on every judged collection on this machine that the tuning never saw,
and the per-query differences are pooled:

- **Vaswani** (NPL physics abstracts, 11,429 docs, 93 queries, binary qrels):
  ``nDCG@10`` (primary) and ``R@100`` via ir-measures.
- **MS MARCO subset**, *test side* of the fixed query split only (the train side's
  queries were turned into claims for the entailment tuning itself, so scoring them
  would measure memorisation): ``nDCG@10`` (graded) via ir-measures.
- **QUEST-attr dev**: the dev side of :func:`logic_rag.evals.quest.split.split_by_atom`
  (seed 0, half) of ``quest/attr/train_dev.jsonl``, 131 queries over the 6,410 evidence
  pages: ``R@20`` via :func:`logic_rag.evals.quest.metrics.evaluate_run`.

Per collection and measure the report gives both arms' means, the paired bootstrap 95%
CI of the mean difference (ET - base), per-query wins/losses/ties and an exact two-sided
sign test on the non-tied queries. The pooled row joins every query's *primary* measure
(nDCG@10 for Vaswani and MS MARCO, R@20 for QUEST; all in [0, 1]) into one paired
sample. A result is called an **effect** when the 95% CI excludes 0, a **null** when the
whole CI lies inside +-``margin`` (0.02 by default, fixed before the first run), and
**inconclusive** otherwise.

Resumable: each (collection, arm) result is saved under ``<out>/parts`` as it finishes;
``<out>/manifest.json`` records the SHA-256 of both models and every data file, and a
re-run with a changed model, data file or setting refuses rather than mix results.

``python -m logic_rag.finetune.entailment.measurable --out runs/et-measurable
[--tuned-model DIR | --run-tuning]``
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MeasurableArgs",
    "Collection",
    "ResumeRefused",
    "compare_per_query",
    "verdict",
    "sha256_file",
    "sha256_tree",
    "check_manifest",
    "load_collection",
    "dense_run",
    "summarise",
    "render_report",
    "run_measurable",
    "main",
]

ARMS = ("base", "entailment_tuned")
#: Ties are differences below this (floating-point noise of the measures).
TIE_TOL = 1e-9


class ResumeRefused(ValueError):
    """``--out`` holds results made from a different model, data file or setting."""


@dataclass
class MeasurableArgs:
    """Arguments of the comparison; every field is a ``--flag`` of :func:`main`."""

    out: str
    tuned_model: str | None = None
    run_tuning: bool = False
    base_model: str = "minilm"
    collections: str = "vaswani,msmarco,quest"
    data_dir: str | None = None
    test_fraction: float = 0.3
    quest_seed: int = 0
    quest_dev_share: float = 0.5
    depth: int = 100
    batch_size: int = 64
    n_boot: int = 10000
    seed: int = 0
    margin: float = 0.02


@dataclass
class Collection:
    """One evaluation collection, ready to encode and score.

    ``score`` maps a run ``{qid: [(doc_id, score), ...]}`` (best first) to per-query
    values ``{measure: {qid: value}}``; ``primary`` names the measure that is pooled.
    """

    name: str
    corpus: dict[str, str]
    queries: dict[str, str]
    measures: tuple[str, ...]
    primary: str
    score: Callable[[dict[str, list[tuple[str, float]]]], dict[str, dict[str, float]]]
    files: tuple[Path, ...]
    note: str = ""


# ---------------------------------------------------------------------------- statistics


def verdict(low: float, high: float, margin: float) -> str:
    """'effect' (CI excludes 0), 'null' (CI inside +-margin) or 'inconclusive'."""
    if low > 0.0 or high < 0.0:
        return "effect"
    if -margin <= low and high <= margin:
        return "null"
    return "inconclusive"


def compare_per_query(
    base: Mapping[str, float],
    tuned: Mapping[str, float],
    *,
    n_boot: int = 10000,
    seed: int = 0,
    margin: float = 0.02,
) -> dict[str, Any]:
    """Paired comparison of two arms' per-query scores (difference = tuned - base).

    Returns means, the paired bootstrap percentile CI of the mean difference
    (:func:`logic_rag.evals.rag.bootstrap.paired_bootstrap`), wins/losses/ties of the
    tuned arm (ties: |difference| <= :data:`TIE_TOL`), the exact two-sided binomial sign
    test on wins vs losses (1.0 when every query ties) and the :func:`verdict`.
    """
    from scipy.stats import binomtest

    from logic_rag.evals.rag.bootstrap import paired_bootstrap

    if set(base) != set(tuned):
        raise ValueError("both arms must be scored on the same query ids")
    if not base:
        raise ValueError("no query to compare")
    qids = sorted(base)
    a = [float(base[q]) for q in qids]
    b = [float(tuned[q]) for q in qids]
    boot = paired_bootstrap(a, b, n_boot=n_boot, seed=seed)
    wins = sum(y - x > TIE_TOL for x, y in zip(a, b, strict=True))
    losses = sum(x - y > TIE_TOL for x, y in zip(a, b, strict=True))
    decided = wins + losses
    sign_p = float(binomtest(wins, decided, 0.5).pvalue) if decided else 1.0
    return {
        "n": len(qids),
        "base": boot.mean_a,
        "entailment_tuned": boot.mean_b,
        "diff": boot.diff,
        "ci_low": boot.low,
        "ci_high": boot.high,
        "bootstrap_p": boot.p_value,
        "n_boot": n_boot,
        "wins": wins,
        "losses": losses,
        "ties": len(qids) - decided,
        "sign_test_p": sign_p,
        "verdict": verdict(boot.low, boot.high, margin),
    }


# ------------------------------------------------------------------------------- hashing


def sha256_file(path: str | Path) -> str:
    """SHA-256 of one file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_tree(folder: str | Path) -> str:
    """SHA-256 over every file of a model folder (relative path and content), so a
    retrained model under the same path is told apart from the one a run started with."""
    root = Path(folder)
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    if not files:
        raise ValueError(f"{root} holds no file; is it a model folder?")
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(sha256_file(path).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def check_manifest(path: Path, current: dict[str, Any]) -> dict[str, Any]:
    """Refuse (:class:`ResumeRefused`) when ``path`` records other models, settings or
    data-file hashes than ``current``; otherwise return the merged manifest.

    Collections present in only one of the two are fine (a run may add a collection);
    every key they share must be equal.
    """
    if not path.is_file():
        return current
    old = json.loads(path.read_text(encoding="utf-8"))
    changed: list[str] = []
    for key in ("models", "settings"):
        for name in sorted(set(old.get(key, {})) | set(current.get(key, {}))):
            if old.get(key, {}).get(name) != current.get(key, {}).get(name):
                changed.append(f"{key}.{name}")
    merged_inputs = dict(old.get("inputs", {}))
    for coll, files in current.get("inputs", {}).items():
        if coll in merged_inputs and merged_inputs[coll] != files:
            for f in sorted(set(merged_inputs[coll]) | set(files)):
                if merged_inputs[coll].get(f) != files.get(f):
                    changed.append(f"inputs.{coll}.{f}")
        merged_inputs[coll] = files
    if changed:
        raise ResumeRefused(
            f"{path.parent} holds results from different inputs ({', '.join(changed)} "
            "changed since they were computed); use a new --out or delete that folder"
        )
    return {**current, "inputs": merged_inputs}


# ----------------------------------------------------------------------------- collections


def _ir_scorer(
    qrels: dict[str, dict[str, int]], queries: Sequence[str], measures: Sequence[str]
) -> Callable[[dict[str, list[tuple[str, float]]]], dict[str, dict[str, float]]]:
    """Per-query ir-measures values; a query with nothing retrieved scores 0, not absent."""

    def score(run: dict[str, list[tuple[str, float]]]) -> dict[str, dict[str, float]]:
        import ir_measures

        judged = {q: qrels[q] for q in queries}
        as_dict = {q: dict(hits) for q, hits in run.items()}
        parsed = [ir_measures.parse_measure(m) for m in measures]
        out = {str(m): dict.fromkeys(queries, 0.0) for m in parsed}
        for row in ir_measures.iter_calc(parsed, judged, as_dict):
            out[str(row.measure)][row.query_id] = float(row.value)
        return out

    return score


def load_vaswani_collection(data: Path) -> Collection:
    from logic_rag.evals.trec import load_vaswani

    c = load_vaswani(data / "vaswani")
    qids = sorted(q for q in c.queries if c.qrels.get(q))
    return Collection(
        name="vaswani",
        corpus=c.corpus,
        queries={q: c.queries[q] for q in qids},
        measures=("nDCG@10", "R@100"),
        primary="nDCG@10",
        score=_ir_scorer(c.qrels, qids, ("nDCG@10", "R@100")),
        files=c.files,
        note="all 93 queries (binary qrels)",
    )


def load_msmarco_collection(data: Path, test_fraction: float) -> Collection:
    from logic_rag.finetune.entailment.data import (
        load_beir_corpus,
        load_beir_qrels,
        load_beir_queries,
        split_queries,
    )

    folder = data / "beir" / "msmarco"
    files = (folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / "test.tsv")
    corpus = load_beir_corpus(files[0])
    queries = load_beir_queries(files[1])
    qrels = load_beir_qrels(files[2])
    _, test = split_queries([q for q in qrels if q in queries], test_fraction=test_fraction)
    return Collection(
        name="msmarco",
        corpus=corpus,
        queries={q: queries[q] for q in test},
        measures=("nDCG@10",),
        primary="nDCG@10",
        score=_ir_scorer(qrels, test, ("nDCG@10",)),
        files=files,
        note="test side of the entailment-tuning query split only (graded qrels)",
    )


def load_quest_collection(data: Path, seed: int, dev_share: float) -> Collection:
    from logic_rag.corpus import load_documents
    from logic_rag.evals.quest.data import load_quest_queries
    from logic_rag.evals.quest.metrics import evaluate_run
    from logic_rag.evals.quest.split import read_records, split_by_atom

    folder = data / "quest" / "attr"
    files = (folder / "documents.jsonl", folder / "train_dev.jsonl")
    docs = load_documents(files[0])
    dev = split_by_atom(read_records(files[1]), dev_share=dev_share, seed=seed).dev
    # Parse the dev records with the project's QUEST reader (validation, qids = index).
    import tempfile

    from logic_rag.atomic import atomic_write_jsonl

    with tempfile.TemporaryDirectory(prefix="quest-dev-") as tmp:
        atomic_write_jsonl(Path(tmp) / "dev.jsonl", dev)
        quest_queries = load_quest_queries(Path(tmp) / "dev.jsonl")

    def score(run: dict[str, list[tuple[str, float]]]) -> dict[str, dict[str, float]]:
        result = evaluate_run(run, quest_queries, ks=(20,), mrecall_ks=())
        return {"R@20": {q: float(row["R@20"]) for q, row in result["per_query"].items()}}

    return Collection(
        name="quest",
        corpus={d.id: d.content for d in docs},
        queries={q.qid: q.query for q in quest_queries},
        measures=("R@20",),
        primary="R@20",
        score=score,
        files=files,
        note=f"dev side of split_by_atom(seed={seed}, dev_share={dev_share})",
    )


def load_collection(name: str, args: MeasurableArgs) -> Collection:
    """Load one of ``vaswani``, ``msmarco``, ``quest`` from the shared data folder."""
    from logic_rag.paths import shared_data_dir

    data = Path(args.data_dir) if args.data_dir else shared_data_dir()
    if name == "vaswani":
        return load_vaswani_collection(data)
    if name == "msmarco":
        return load_msmarco_collection(data, args.test_fraction)
    if name == "quest":
        return load_quest_collection(data, args.quest_seed, args.quest_dev_share)
    raise ValueError(f"unknown collection {name!r}; choose from vaswani, msmarco, quest")


# ------------------------------------------------------------------------------ retrieval


def dense_run(
    model: Any, coll: Collection, *, depth: int, batch_size: int
) -> dict[str, list[tuple[str, float]]]:
    """Encode the corpus and queries once, exhaustive cosine top-``depth`` per query."""
    import torch

    doc_ids = list(coll.corpus)
    qids = list(coll.queries)
    docs = model.encode(
        [coll.corpus[d] for d in doc_ids],
        batch_size=batch_size,
        convert_to_tensor=True,
        normalize_embeddings=True,
        show_progress_bar=True,
    )
    qs = model.encode(
        [coll.queries[q] for q in qids],
        batch_size=batch_size,
        convert_to_tensor=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    top = torch.topk(qs @ docs.T, k=min(depth, len(doc_ids)), dim=1)
    return {
        q: [(doc_ids[j], float(s)) for j, s in zip(idx, sc, strict=True)]
        for q, idx, sc in zip(qids, top.indices.tolist(), top.values.tolist(), strict=True)
    }


# ----------------------------------------------------------------------------------- run


def _resolve_tuned(args: MeasurableArgs, out: Path) -> str:
    from logic_rag.finetune.entailment.train import resolve_tuned_model

    path = resolve_tuned_model(
        args.tuned_model,
        args.run_tuning,
        out,
        base_model=args.base_model,
        data_dir=args.data_dir,
        test_fraction=args.test_fraction,
    )
    return str(Path(path).resolve()) if args.tuned_model is not None else path


def _settings(args: MeasurableArgs) -> dict[str, Any]:
    """The arguments that change a number (not out, n_boot-independent ones included)."""
    keep = ("test_fraction", "quest_seed", "quest_dev_share", "depth")
    return {k: getattr(args, k) for k in keep}


def run_measurable(args: MeasurableArgs) -> dict[str, Any]:
    """Evaluate both arms on every requested collection; write results.json, report.md."""
    from sentence_transformers import SentenceTransformer
    from tqdm.auto import tqdm

    from logic_rag.atomic import atomic_write_json, atomic_write_text
    from logic_rag.models import resolve_model

    names = [n.strip() for n in args.collections.split(",") if n.strip()]
    if not names:
        raise ValueError("--collections is empty")
    out = Path(args.out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    paths = {"base": str(resolve_model(args.base_model).path), "entailment_tuned": ""}
    paths["entailment_tuned"] = _resolve_tuned(args, out)
    colls = {n: load_collection(n, args) for n in names}
    manifest = {
        "models": {arm: {"path": p, "sha256": sha256_tree(p)} for arm, p in paths.items()},
        "settings": _settings(args),
        "inputs": {n: {str(f): sha256_file(f) for f in c.files} for n, c in colls.items()},
    }
    manifest = check_manifest(out / "manifest.json", manifest)
    atomic_write_json(out / "manifest.json", manifest)

    models: dict[str, Any] = {}
    todo = [(n, arm) for n in names for arm in ARMS]
    for name, arm in tqdm(todo, desc="collections x arms", unit="run"):
        part = out / "parts" / f"{name}__{arm}.json"
        if part.is_file():
            continue
        if arm not in models:
            models[arm] = SentenceTransformer(paths[arm], device="cpu", trust_remote_code=False)
        t0 = time.monotonic()
        coll = colls[name]
        run = dense_run(models[arm], coll, depth=args.depth, batch_size=args.batch_size)
        per_query = coll.score(run)
        atomic_write_json(
            part,
            {
                "collection": name,
                "arm": arm,
                "model_sha256": manifest["models"][arm]["sha256"],
                "inputs_sha256": manifest["inputs"][name],
                "per_query": per_query,
                "seconds": round(time.monotonic() - t0, 1),
            },
        )

    results = summarise(out, colls, args)
    results["models"] = manifest["models"]
    results["args"] = dataclasses.asdict(args)
    results["seconds_this_run"] = round(time.monotonic() - started, 1)
    for arm, p in paths.items():
        results["models"][arm]["max_seq_length"] = _max_seq_length(Path(p))
    tuning_report = Path(paths["entailment_tuned"]) / "entailment_tuning.json"
    if tuning_report.is_file():
        tuning = json.loads(tuning_report.read_text(encoding="utf-8"))
        results["entailment_tuning"] = {
            "args": tuning.get("args"),
            "pairs": tuning.get("pairs"),
            "seconds": tuning.get("seconds"),
            "head_warmup": tuning.get("head_warmup"),
            "tuning": {k: v for k, v in (tuning.get("tuning") or {}).items() if k != "log"},
        }
    atomic_write_json(out / "results.json", results)
    atomic_write_text(out / "report.md", render_report(results))
    return results


def _max_seq_length(folder: Path) -> int | None:
    """The truncation length sentence-transformers applies: ``max_seq_length`` of
    ``sentence_bert_config.json`` or, when absent (newer saves), the tokenizer's
    ``model_max_length``; reported so that a truncation difference is not mistaken for an
    effect of the tuning."""
    for name, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        cfg = folder / name
        if cfg.is_file():
            value = json.loads(cfg.read_text(encoding="utf-8")).get(key)
            if isinstance(value, int):
                return value
    return None


def summarise(out: Path, colls: Mapping[str, Collection], args: MeasurableArgs) -> dict[str, Any]:
    """Per-collection comparisons and the pooled primary-measure comparison from parts."""
    from logic_rag.atomic import atomic_write_json

    per_coll: dict[str, Any] = {}
    pooled: dict[str, dict[str, float]] = {arm: {} for arm in ARMS}
    for name, coll in colls.items():
        parts = {
            arm: json.loads((out / "parts" / f"{name}__{arm}.json").read_text(encoding="utf-8"))
            for arm in ARMS
        }
        by_measure = {
            m: compare_per_query(
                parts["base"]["per_query"][m],
                parts["entailment_tuned"]["per_query"][m],
                n_boot=args.n_boot,
                seed=args.seed,
                margin=args.margin,
            )
            for m in coll.measures
        }
        per_coll[name] = {
            "queries": len(coll.queries),
            "documents": len(coll.corpus),
            "primary": coll.primary,
            "note": coll.note,
            "measures": by_measure,
            "seconds": {arm: parts[arm]["seconds"] for arm in ARMS},
        }
        atomic_write_json(out / "collections" / f"{name}.json", per_coll[name])
        for arm in ARMS:
            for q, v in parts[arm]["per_query"][coll.primary].items():
                pooled[arm][f"{name}:{q}"] = v
    result: dict[str, Any] = {"collections": per_coll}
    result["pooled"] = {
        "measure": "primary per collection: "
        + ", ".join(f"{n} {c.primary}" for n, c in colls.items()),
        **compare_per_query(
            pooled["base"],
            pooled["entailment_tuned"],
            n_boot=args.n_boot,
            seed=args.seed,
            margin=args.margin,
        ),
    }
    return result


def _f(x: float, d: int = 4) -> str:
    return f"{x:.{d}f}"


def _p(x: float) -> str:
    return f"{x:.3g}" if x >= 1e-3 else f"{x:.1e}"


def render_report(results: dict[str, Any]) -> str:
    """Markdown: one row per collection x measure, the pooled row, settings and caveats."""
    args = results["args"]
    lines = [
        "# Entailment tuning at a measurable size (zero-shot, no contrastive step)",
        "",
        "Base encoder vs the same encoder after the project's entailment tuning, both used "
        "as they are. Difference = ET - base; 95% CI: paired bootstrap "
        f"({args['n_boot']} resamples of queries); W/L/T: queries where ET scores higher / "
        "lower / equal; sign test: exact two-sided binomial on W vs L. Verdict: *effect* "
        f"if the CI excludes 0, *null* if the whole CI is inside +-{args['margin']}, else "
        "*inconclusive*.",
        "",
        "| collection | measure | queries | base | ET | diff [95% CI] | W/L/T | sign p | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def row(label: str, measure: str, c: dict[str, Any]) -> str:
        return (
            f"| {label} | {measure} | {c['n']} | {_f(c['base'])} | {_f(c['entailment_tuned'])} "
            f"| {c['diff']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] "
            f"| {c['wins']}/{c['losses']}/{c['ties']} | {_p(c['sign_test_p'])} "
            f"| {c['verdict']} |"
        )

    for name, coll in results["collections"].items():
        for m, c in coll["measures"].items():
            lines.append(row(name, m, c))
    pooled = results["pooled"]
    lines.append(row("**pooled**", "primary", pooled))
    lines += ["", f"Pooled measure: {pooled['measure']}.", "", "## Collections", ""]
    for name, coll in results["collections"].items():
        secs = ", ".join(f"{a} {s} s" for a, s in coll["seconds"].items())
        lines.append(
            f"- **{name}**: {coll['queries']} queries, {coll['documents']} documents; "
            f"{coll['note']}. Encode + score: {secs}."
        )
    lines += ["", "## Models", ""]
    for arm, m in results["models"].items():
        lines.append(
            f"- {arm}: `{m['path']}` (max_seq_length {m.get('max_seq_length')}, "
            f"sha256 {m['sha256'][:16]}...)"
        )
    et = results.get("entailment_tuning")
    if et:
        targs = et.get("args") or {}
        shown = {
            k: targs.get(k)
            for k in ("base_model", "max_steps", "batch_size", "learning_rate", "max_pairs")
            if k in targs
        }
        shown.update({k: targs[k] for k in ("nli_fraction", "beta") if k in targs})
        tun = et.get("tuning") or {}
        lines += [
            "",
            f"Entailment tuning settings: `{json.dumps(shown, sort_keys=True)}`; pairs "
            f"{et.get('pairs')}; masked-hypothesis loss "
            f"{_f(tun.get('masked_hypothesis_loss_before', math.nan), 2)} -> "
            f"{_f(tun.get('masked_hypothesis_loss_after', math.nan), 2)}.",
        ]
    lines += ["", "Arguments: `" + json.dumps(args, sort_keys=True) + "`", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m logic_rag.finetune.entailment.measurable --out DIR [...]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    defaults = MeasurableArgs(out="")
    for f in dataclasses.fields(MeasurableArgs):
        flag = "--" + f.name.replace("_", "-")
        if f.name == "out":
            parser.add_argument(flag, required=True)
        elif str(f.type) == "bool":
            parser.add_argument(flag, action="store_true", default=False)
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, type=kind, default=getattr(defaults, f.name))
    args = MeasurableArgs(**vars(parser.parse_args(argv)))
    try:
        results = run_measurable(args)
    except ValueError as exc:  # ResumeRefused and bad arguments: a message, not a trace
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(render_report(results))
    return 0 if not math.isnan(results["pooled"]["diff"]) else 1


if __name__ == "__main__":
    sys.exit(main())
