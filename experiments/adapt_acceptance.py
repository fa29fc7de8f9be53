"""Issue 41's acceptance numbers for ``adapt``, with the LLM's verdicts replayed.

Why a driver: the acceptance table compares three EmbeddingGemma query encoders on the
QUEST-attr dev split (base, adapted on the LLM's labels, adapted on gold labels for the
same atoms and pairs), the distilled cross-encoder as ``verify``'s verifier, and the cost
of each. The LLM's verdicts were scored once on a lent GPU
(``experiments.relay_record adapt`` then ``experiments.llm_relay score``) and are replayed
here, so labelling costs nothing on the CPU and the run is reproducible by one command::

    python -m experiments.adapt_acceptance --work /tmp/a41 \\
        --index /tmp/verd/quest-gemma --split /tmp/verd/split \\
        --scores .gpu41/scores/scores.jsonl

Each step skips what its folder already holds (``adapt`` resumes by itself; an evaluation
folder with a ``results.json`` is read back), so a killed run goes on where it stopped.

The gold control needs a gold set for every atom the *rules* read off the train
questions, but QUEST's gold sets are keyed by its own marked atoms, spelt differently
("1946 Indian musical films" is QUEST's "Indian musical films" and "1946 films"). The
alignment (:func:`align_atoms`) is done per question: a question the rules read as one
atom gets that question's own gold set (the atom *is* the question); otherwise each rules
atom takes the marked atom of the same question with the largest word overlap (marked
atoms used once while any is left). QUEST's sets of atoms that are not whole ``_``
questions are partial (members seen in gold sets and attributions), so the control's
"no" includes unknown members: it is gold as QUEST knows it, not the truth.

Training settings were fixed before any dev run (see ``TRAINING``): SupCon, 40 steps,
batch 32, query tower only, so the existing index (documents embedded by the base) stays
valid and no 6,410-page re-encoding is needed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from logic_rag.finetune.adapt.atoms import atom_key

__all__ = ["TRAINING", "align_atoms", "replay_teacher", "seed_from_earlier_run", "main"]

#: The training settings, fixed before any dev number was seen (issue 41's rule).
TRAINING: dict[str, Any] = {"query_only": True, "max_steps": 40}

RELAY_NAME = "relay:transformers-bf16-h200:qwen2.5-1.5b"
"""The replayed teacher's name: where the verdicts came from (it enters every cache key)."""

_WORD = re.compile(r"[a-z0-9]+")
_MARK = re.compile(r"<mark>(.*?)</mark>")


def _words(text: str) -> set[str]:
    """Content words for the overlap: lower case, ``1940's`` -> ``1940s``, plural ``s``
    dropped so "film" meets "films"."""
    text = text.casefold().replace("'s", "s").replace("’s", "s")
    out = set()
    for w in _WORD.findall(text):
        if len(w) > 3 and w.endswith("s") and not w[:-1].isdigit():
            w = w[:-1]
        out.add(w)
    return out - {"the", "and", "or", "of", "in", "that", "are", "also", "not", "non"}


def _overlap(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / max(1, len(wa | wb))


def align_atoms(
    records: Sequence[dict[str, Any]], quest_sets: dict[str, set[str]]
) -> tuple[dict[str, set[str]], dict[str, int]]:
    """Gold sets for the rules' atoms of ``records`` (QUEST train records), by question.

    Returns ``{rules atom: titles}`` and counts of how each (question, atom) was matched:
    ``exact`` (same text as a marked atom), ``whole`` (the rules read the question as one
    atom: its gold set), ``overlap`` (best word overlap with a marked atom) and ``none``
    (no marked atom shares a word: empty set). An atom met in several questions gets the
    union of its sets.
    """
    from logic_rag.query.algebra import atoms
    from logic_rag.query.rules import RuleDecomposer

    known = {atom_key(a): docs for a, docs in quest_sets.items()}
    decomposer = RuleDecomposer()
    out: dict[str, set[str]] = {}
    counts = {"exact": 0, "whole": 0, "overlap": 0, "none": 0}
    for record in records:
        marked = _MARK.findall(record.get("original_query") or "")
        ours = list(
            dict.fromkeys(a.text for a in atoms(decomposer.decompose(record["query"]).query))
        )
        if len(ours) == 1 and atom_key(ours[0]) not in known:
            counts["whole"] += 1
            out.setdefault(ours[0], set()).update(record.get("docs", []))
            continue
        free = list(marked)
        for atom in ours:
            if atom_key(atom) in known:
                counts["exact"] += 1
                out.setdefault(atom, set()).update(known[atom_key(atom)])
                if atom in free:
                    free.remove(atom)
                continue
            pool = free or marked
            best = max(pool, key=lambda m: _overlap(atom, m), default=None)
            if best is None or _overlap(atom, best) == 0.0:
                counts["none"] += 1
                out.setdefault(atom, set())
                continue
            counts["overlap"] += 1
            out.setdefault(atom, set()).update(known.get(atom_key(best), set()))
            if best in free:
                free.remove(best)
    return out, counts


def replay_teacher(scores: Sequence[str | Path]) -> Any:
    """Qwen2.5-1.5B's verdicts, replayed from the GPU's scores file (LookupError on a
    prompt that was never scored: a setting changed the labelling plan)."""
    from experiments.llm_relay import ReplayGenerator
    from logic_rag.verifiers.llm import LLMVerifier

    return LLMVerifier(
        generator=ReplayGenerator([str(p) for p in scores], name=RELAY_NAME), max_chars=1500
    )


def _settings(max_pairs: int, **recipe: Any) -> Any:
    """The run's settings: ``TRAINING`` and the recipe under test (``train_queries``,
    ``hard_negatives``)."""
    from finetune.adapt.state import AdaptSettings

    return AdaptSettings(max_pairs=max_pairs, **{**TRAINING, **recipe})


def seed_from_earlier_run(folder: Path, earlier: Path, questions: Path) -> dict[str, int]:
    """Write ``folder``'s ``plan.jsonl`` and ``labels.jsonl`` from an earlier run's labelled
    pairs, restricted to the groups of ``questions`` (a subset of the earlier run's).

    Why: the labelling plan searches all atoms in one batch, and a batch of other atoms can
    flip a near tie in an atom's top pages, so a run on a subset of the questions would ask
    prompts the GPU never scored. Each group gets every labelled pair of its atoms with the
    pages any of them was paired with; ``adapt`` then reads the plan and finds every label.
    """
    from finetune.adapt.atoms import atoms_from_queries, read_queries
    from logic_rag.atomic import atomic_write_jsonl

    if (folder / "plan.jsonl").exists():
        return {}
    plan = list(_read_jsonl(earlier / "plan.jsonl"))
    labels = {row["key"]: row for row in _read_jsonl(earlier / "labels.jsonl")}
    by_pair = {(row["atom"], row["row"]): row for row in plan if row["key"] in labels}
    pages: dict[str, list[int]] = {}
    for atom, row in by_pair:
        pages.setdefault(atom, []).append(row)
    out, seen = [], set()
    for group in atoms_from_queries(read_queries(questions))["groups"]:
        rows = list(dict.fromkeys(r for a in group for r in pages.get(a, ())))
        for atom in group:
            for r in rows:
                item = by_pair.get((atom, r))
                if item is not None and item["key"] not in seen:
                    seen.add(item["key"])
                    out.append(item)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_jsonl(folder / "plan.jsonl", out)
    atomic_write_jsonl(folder / "labels.jsonl", (labels[row["key"]] for row in out))
    return {"pairs": len(out)}


def _read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _eval(
    index: Path,
    dev: Path,
    out: Path,
    *,
    model: str | None = None,
    strategy: str = "rerank",
    verifier: str | None = None,
) -> dict[str, Any]:
    """Dev metrics of one configuration (read back when ``out`` already holds them)."""
    results = out / "results.json"
    if not results.is_file():
        from logic_rag.evals.quest.runner import run_eval_quest

        run_eval_quest(
            docs=None,
            queries=dev,
            out=out,
            model=model,
            strategies=[strategy],
            index=index,
            config={"verifier": verifier} if verifier else None,
        )
    return json.loads(results.read_text(encoding="utf-8"))


def _boolq(work: Path, models: dict[str, str | None]) -> dict[str, dict[str, float]]:
    """boolq_not through the retriever's ``rerank`` over its top 20: R@1 and the share of
    questions whose trap ranks above the answer, per query encoder.

    The passages are embedded once by the base (``work/boolq-gemma``); an adapted
    query-only model searches that index, as it would a user's. (The candidate-reranker
    harness of ``experiments/rerankers_boolq.py`` embeds candidates with the model it is
    given, which for a query-only fine-tune is the wrong tower.)
    """
    import csv

    from logic_rag.corpus import load_beir
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.paths import shared_data_dir

    folder = shared_data_dir() / "negation" / "boolq_not"
    data = load_beir(folder)
    with open(folder / "traps.tsv", encoding="utf-8", newline="") as handle:
        traps = {row[0]: row[1] for row in csv.reader(handle, delimiter="\t") if row}
    qids = [q for q in data.queries if q in data.qrels and q in traps]
    index = work / "boolq-gemma"
    if not (index / "manifest.json").is_file():
        LogicRetriever.build(data.corpus, model="embeddinggemma-300m").save(index)
    out = {}
    for name, model in models.items():
        retriever = LogicRetriever.load(index, model=model)
        r1 = above = 0
        for qid in qids:
            order = [h.id for h in retriever.search(data.queries[qid], k=20, strategy="rerank")]
            answer = next(iter(data.qrels[qid]))
            rank = order.index(answer) if answer in order else None
            trap = order.index(traps[qid]) if traps[qid] in order else None
            r1 += rank == 0
            above += trap is not None and (rank is None or trap < rank)
        out[name] = {"R@1": round(r1 / len(qids), 3), "trap_above": round(above / len(qids), 3)}
    return out


def _msmarco(work: Path, models: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    """MS MARCO subset nDCG@10 (vanilla and rerank) per query encoder, over one index of
    the 5,000 passages embedded by the base."""
    from logic_rag.evals.beir import evaluate_beir
    from logic_rag.paths import shared_data_dir

    folder = shared_data_dir() / "beir" / "msmarco"
    index = work / "msmarco-gemma"
    if not (index / "manifest.json").is_file():
        evaluate_beir(folder, model="embeddinggemma-300m", strategies=["vanilla"], index=index)
    return {
        name: evaluate_beir(folder, model=model, strategies=["vanilla", "rerank"], index=index)[
            "strategies"
        ]
        for name, model in models.items()
    }


def _row(name: str, results: dict[str, Any]) -> str:
    from logic_rag.query.templates import TEMPLATES

    metrics = results["metrics"]
    cells = [f"{metrics['all']['R@20']:.3f}"]
    cells += [
        f"{metrics['by_template'].get(t, {}).get('R@20', float('nan')):.3f}" for t in TEMPLATES
    ]
    return f"| {name} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="adapt_acceptance", description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True, help="work folder (runs, evaluations)")
    p.add_argument("--index", type=Path, required=True, help="EmbeddingGemma QUEST-attr index")
    p.add_argument("--split", type=Path, required=True, help="folder with train.jsonl, dev.jsonl")
    p.add_argument("--scores", nargs="+", required=True, help="the GPU's scores.jsonl")
    p.add_argument("--max-pairs", type=int, default=4000)
    p.add_argument(
        "--steps",
        default="base,llm,eval-llm,gold,eval-gold,verify",
        help="comma-separated: base, llm, eval-llm, gold, eval-gold, verify, vanilla, boolq, "
        "msmarco",
    )
    p.add_argument(
        "--llm-stop-after",
        default=None,
        help="stop the LLM-label run after this phase (e.g. model, to skip the verifier)",
    )
    p.add_argument(
        "--train-queries",
        choices=["composed", "questions", "both"],
        default="composed",
        help="what the bi-encoder trains on (AdaptSettings.train_queries)",
    )
    p.add_argument(
        "--hard-negatives",
        action="store_true",
        help="the judged pages outside each training set as known negatives",
    )
    p.add_argument("--lr", type=float, default=None, help="AdaptSettings.lr (default 5e-5)")
    p.add_argument(
        "--yes-threshold", type=float, default=None, help="AdaptSettings.yes_threshold (0.5)"
    )
    p.add_argument(
        "--labels-from",
        type=Path,
        default=None,
        help="an earlier LLM run's folder: replay its labelled pairs for these questions "
        "(seed_from_earlier_run) instead of planning anew",
    )
    args = p.parse_args(argv)
    from finetune.adapt.driver import adapt
    from finetune.adapt.gold import KnownSetsVerifier
    from logic_rag.atomic import atomic_write_json, atomic_write_jsonl
    from logic_rag.evals.quest.data import load_atom_sets
    from logic_rag.finetune.data.quest import build_quest_set

    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    recipe = {"train_queries": args.train_queries, "hard_negatives": args.hard_negatives}
    recipe.update({k: v for k, v in (("lr", args.lr), ("yes_threshold", args.yes_threshold)) if v})
    work, n = args.work, args.max_pairs
    train, dev = args.split / "train.jsonl", args.split / "dev.jsonl"
    llm_dir, gold_dir = work / f"llm{n}", work / f"gold{n}"
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    rows = []

    if "base" in steps:
        rows.append(_row("base EmbeddingGemma", _eval(args.index, dev, work / "dev-base")))

    def llm_run(**options: Any) -> None:
        """The LLM-label run (resumed where it stopped; ``options``: stop_after, dev)."""
        adapt(
            args.index,
            llm_dir,
            queries=train,
            verifier=replay_teacher(args.scores),
            settings=_settings(n, **recipe),
            progress=False,
            **options,
        )

    if "llm" in steps:
        if args.labels_from is not None:  # the atoms phase opens the run folder first
            llm_run(stop_after="atoms")
            seeded = seed_from_earlier_run(llm_dir, args.labels_from, train)
            log(f"seeded from {args.labels_from}: {seeded}")
        start = time.perf_counter()
        llm_run(stop_after=args.llm_stop_after)
        log(f"adapt (LLM labels) {time.perf_counter() - start:.0f} s")
    if "eval-llm" in steps:
        res = _eval(args.index, dev, work / f"dev-llm{n}", model=str(llm_dir / "model"))
        rows.append(_row(f"adapted, LLM labels ({n} pairs)", res))
        if args.llm_stop_after is None:  # the card carries the dev numbers (a resumed run)
            base = _eval(args.index, dev, work / "dev-base")
            llm_run(
                dev={
                    "dev R@20, rerank, base": round(base["metrics"]["all"]["R@20"], 3),
                    "dev R@20, rerank, adapted": round(res["metrics"]["all"]["R@20"], 3),
                    "dev queries": res["metrics"]["all"]["n"],
                },
            )
    if "gold" in steps:
        quest = build_quest_set(work / "quest-set")  # QUEST's atom sets, seed-0 split
        records = list(_read_jsonl(train))
        sets, counts = align_atoms(records, load_atom_sets(quest / "atoms.jsonl"))
        aligned = work / "gold-atoms.jsonl"
        atomic_write_jsonl(
            aligned, ({"atom": a, "docs": sorted(d)} for a, d in sorted(sets.items()))
        )
        log(f"gold atoms aligned to the rules' atoms: {counts}")
        start = time.perf_counter()
        adapt(
            args.index,
            gold_dir,
            queries=train,
            verifier=KnownSetsVerifier.from_file(aligned),
            settings=_settings(n, **recipe),
            progress=False,
            stop_after="model",
        )
        log(f"adapt (gold labels) {time.perf_counter() - start:.0f} s")
        same = (llm_dir / "plan.jsonl").read_bytes() == (gold_dir / "plan.jsonl").read_bytes()
        log(f"same plan as the LLM run: {same}")
    if "eval-gold" in steps:
        res = _eval(args.index, dev, work / f"dev-gold{n}", model=str(gold_dir / "model"))
        rows.append(_row(f"adapted, gold labels ({n} pairs)", res))
    if "verify" in steps:
        res = _eval(
            args.index,
            dev,
            work / f"dev-verify{n}",
            strategy="verify",
            verifier=f"cross-encoder:{llm_dir / 'verifier'}",
        )
        per_query = res["costs"]["seconds_mean"]
        rows.append(_row(f"base + `verify` with DIR/verifier ({per_query:.2f} s/query)", res))
    if "vanilla" in steps:  # a diagnostic: the dense ranking alone, without rerank
        for name, folder in (("base", None), ("llm", llm_dir), ("gold", gold_dir)):
            if folder is None or (folder / "model").is_dir():
                model = None if folder is None else str(folder / "model")
                res = _eval(
                    args.index,
                    dev,
                    work / f"dev-vanilla-{name}{n}",
                    model=model,
                    strategy="vanilla",
                )
                rows.append(_row(f"{name}, vanilla ({n} pairs)", res))
    models = {"base": None, "llm": str(llm_dir / "model"), "gold": str(gold_dir / "model")}
    models = {k: v for k, v in models.items() if v is None or Path(v).is_dir()}
    for step, measure in (("boolq", _boolq), ("msmarco", _msmarco)):
        if step in steps:
            found = measure(work, models)
            atomic_write_json(work / f"{step}{n}.json", found)
            print(f"{step}: {json.dumps(found)}")
    if rows:
        print("| run | all | `_` | or | or3 | and | and3 | not | and-not |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
