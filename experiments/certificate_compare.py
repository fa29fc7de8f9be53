"""The whole-logic certificate against its peers, at equal LLM calls and equal prompt tokens.

Two measurements, each with its settings fixed by its flags before anything is searched
(written to ``OUT/settings.json``), one query at a time, results rewritten after each so a
run stopped at ``--deadline`` keeps what it measured:

``quest``: QUEST-attr dev (the seed-0 atom-disjoint split, the first ``--per-template``
queries of each template, taken template by template in turn so that a stopped run is
still balanced), at ``k`` with ``quality``'s pool and per-query budget fixed. Per query:

* ``vanilla`` and ``rerank`` (no LLM);
* ``quality`` (every constraint, NOT ones included) and ``quality`` with
  ``whole_query=True`` (the whole query first, constraints where it is unsure);
* ``llm-rerank`` (one whole-query check per page of the same pool) with ``top`` set per
  query to each ``quality`` run's calls (equal calls), and to the pages whose whole-query
  prompts add up to that run's prompt tokens (equal tokens), counted two ways: ``raw``
  (every prompt in full) and ``shared`` (prompts in page-major order, a prompt's tokens
  that repeat the previous prompt's prefix not counted again: what llama.cpp's and vLLM's
  prefix caches evaluate).

``boolq``: the boolq_not exclusion questions over a dense store's top ``--candidates``
passages, re-ranked by ``rerank`` and by ``quality`` to ``--top-n``; the share of
questions whose trap passage ranks above the answer in what is returned (a trap outside
it ranks below).

Every raw LLM score is kept in ``OUT/verdicts.json`` (keyed by constraint and the SHA-1 of
the text shown), so a rerun asks nothing twice; calls and tokens are counted as the
pipelines ask (a remembered answer still counts).

    python -m experiments.certificate_compare quest --index runs/quest-gemma \\
        --out runs/cert-quest --per-template 2 --k 20 --pool 40 --budget 60
    python -m experiments.certificate_compare boolq --out runs/cert-boolq --limit 40 \\
        --candidates 20 --top-n 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from logic_rag.verifiers.llm import LLMVerifier

__all__ = ["CountingVerifier", "prompt_token_counts", "interleaved", "main"]

PROG = "certificate_compare"


class CountingVerifier(LLMVerifier):
    """An :class:`LLMVerifier` that remembers every (constraint, shown text) pair asked of
    it, answered from its cache or not: the calls and prompts a pipeline spent."""

    def cached_scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self._loaded.setdefault("asked", []).extend(pairs)
        return super().cached_scores(pairs)

    def take_asked(self) -> list[tuple[str, str]]:
        """The pairs asked since the last call (and forget them)."""
        return self._loaded.pop("asked", [])


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def prompt_token_counts(
    pairs: Sequence[tuple[str, str]], tokens_of: Callable[[str, str], list[int]]
) -> tuple[int, int]:
    """``(raw, shared)`` prompt tokens of ``pairs``: every prompt in full, and in
    page-major order with each prompt's prefix shared with the previous one not counted
    again (the order :meth:`LLMVerifier.score_texts` sends them in)."""
    ordered = sorted(pairs, key=lambda p: (p[1], p[0]))
    raw = shared = 0
    previous: list[int] = []
    for atom, page in ordered:
        tokens = tokens_of(atom, page)
        raw += len(tokens)
        shared += len(tokens) - _common_prefix(tokens, previous)
        previous = tokens
    return raw, shared


def interleaved(queries: Sequence[Any]) -> list[Any]:
    """One query of each template in turn (file order within a template)."""
    by_template: dict[str, list[Any]] = {}
    for q in queries:
        by_template.setdefault(q.template or "?", []).append(q)
    out: list[Any] = []
    depth = max((len(v) for v in by_template.values()), default=0)
    for i in range(depth):
        for template in sorted(by_template):
            if i < len(by_template[template]):
                out.append(by_template[template][i])
    return out


def _tokenizer(verifier: LLMVerifier) -> Callable[[str, str], list[int]]:
    generator = verifier._generator()
    seen: dict[tuple[str, str], list[int]] = {}

    def tokens_of(atom: str, page: str) -> list[int]:
        key = (atom, page)
        if key not in seen:
            prompt = verifier.render(atom, page)
            if hasattr(generator, "prompt_tokens"):
                seen[key] = generator.prompt_tokens(prompt, verifier.system, budget=1 << 20)
            else:  # a generator without a tokenizer: characters / 4, said in the report
                seen[key] = list(range(len(prompt) // 4))
        return seen[key]

    return tokens_of


def _deadline(text: str | None) -> float | None:
    if not text:
        return None
    hour, minute = (int(x) for x in text.split(":"))
    now = datetime.now(UTC)
    at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at <= now:
        raise ValueError(f"--deadline {text} UTC has passed")
    return time.time() + (at - now).total_seconds()


def _verifier(args: argparse.Namespace, out: Path) -> CountingVerifier:
    from experiments.quality_curve import SavedVerdicts

    fingerprint = LLMVerifier(generator=args.llm).fingerprint()
    return CountingVerifier(
        generator=args.llm, cache=SavedVerdicts(out / "verdicts.json", fingerprint)
    )


def _llm_info(hits: Sequence[Any]) -> dict[str, Any]:
    return (hits[0].logic.get("llm") if hits and hits[0].logic else None) or {}


# ---------------------------------------------------------------------------- quest


def _quest(args: argparse.Namespace, out: Path, stop_at: float | None, log: Any) -> int:
    from dataclasses import replace

    from experiments.quality_curve import dev_queries
    from logic_rag.atomic import atomic_write_json, atomic_write_text
    from logic_rag.evals.quest.metrics import evaluate_run
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.paths import shared_data_dir
    from logic_rag.strategy_settings import LLMRerankSettings, QualitySettings

    data = shared_data_dir() / "quest" / "attr"
    queries = interleaved(dev_queries(data, per_template=args.per_template))
    verifier = _verifier(args, out)
    retriever = LogicRetriever.load(args.index)
    tokens_of = _tokenizer(verifier)
    quality = QualitySettings(verifier=verifier, pool=args.pool, max_calls=args.budget)
    runs: dict[str, Any] = {
        "quality": quality,
        "quality whole-query": replace(quality, whole_query=True),
    }
    rows_path = out / "rows.json"
    rows: dict[str, dict[str, Any]] = {}
    if rows_path.is_file():
        rows = json.loads(rows_path.read_text(encoding="utf-8"))
    for q in queries:
        if q.qid in rows:
            continue
        if stop_at is not None and time.time() > stop_at:
            log(f"deadline reached after {len(rows)} queries")
            break
        began = time.perf_counter()
        row: dict[str, Any] = {"template": q.template, "query": q.query, "runs": {}}
        for name in ("vanilla", "rerank"):
            hits = retriever.search(q.query, k=args.k, strategy=name)
            row["runs"][name] = {"ranking": [h.id for h in hits], "calls": 0}
        for name, settings in runs.items():
            verifier.take_asked()
            hits = retriever.with_settings(settings).search(q.query, k=args.k, strategy="quality")
            asked = verifier.take_asked()
            raw, shared = prompt_token_counts(asked, tokens_of)
            info = _llm_info(hits)
            row["runs"][name] = {
                "ranking": [h.id for h in hits],
                "calls": len(asked),
                "reported_calls": info.get("calls"),
                "certified": info.get("certified"),
                "raw_tokens": raw,
                "shared_tokens": shared,
            }

        # The whole-query peer: every page of the pool first (the reference, and the
        # prompts' lengths), then at each quality run's calls and tokens.
        def llm_rerank(top: int, q: Any = q) -> dict[str, Any]:
            verifier.take_asked()
            settings = LLMRerankSettings(verifier=verifier, pool=args.pool, top=top)
            hits = retriever.with_settings(settings).search(
                q.query, k=args.k, strategy="llm-rerank"
            )
            asked = verifier.take_asked()
            raw, shared = prompt_token_counts(asked, tokens_of)
            return {
                "ranking": [h.id for h in hits],
                "calls": len(asked),
                "top": top,
                "raw_tokens": raw,
                "shared_tokens": shared,
            }

        every = llm_rerank(args.pool)
        row["runs"]["llm-rerank every page"] = every
        pages = max(every["calls"], 1)
        for name in runs:
            spent = row["runs"][name]
            targets = {
                "calls": spent["calls"],
                "raw tokens": spent["raw_tokens"] * pages / max(every["raw_tokens"], 1),
                "shared tokens": spent["shared_tokens"] * pages / max(every["shared_tokens"], 1),
            }
            for measure, target in targets.items():
                top = int(min(max(round(target), 1), args.pool))
                row["runs"][f"llm-rerank = {name} {measure}"] = llm_rerank(top)
        row["seconds"] = round(time.perf_counter() - began, 1)
        rows[q.qid] = row
        atomic_write_json(rows_path, rows)
        summary = summarise(rows, queries, args.k, evaluate_run)
        atomic_write_json(out / "results.json", summary)
        atomic_write_text(out / "table.md", quest_table(summary) + "\n")
        log(
            f"{len(rows)}/{len(queries)} {q.template}: {row['seconds']} s; "
            + ", ".join(f"{n} {r['calls']}" for n, r in row["runs"].items() if r["calls"])
        )
    if rows:
        print(quest_table(summarise(rows, queries, args.k, evaluate_run)))
    return 0


def summarise(
    rows: dict[str, dict[str, Any]], queries: Sequence[Any], k: int, evaluate_run: Any
) -> dict[str, Any]:
    """R@k overall and per template, mean calls and tokens, per run, over the finished
    queries."""
    done = [q for q in queries if q.qid in rows]
    names = list(next(iter(rows.values()))["runs"]) if rows else []
    key = f"R@{k}"
    out: dict[str, Any] = {"queries": len(done), "runs": {}}
    for name in names:
        ranking = {
            q.qid: [(doc, -float(i)) for i, doc in enumerate(rows[q.qid]["runs"][name]["ranking"])]
            for q in done
        }
        scores = evaluate_run(ranking, done, ks=(k,), mrecall_ks=(k,))
        spent = [rows[q.qid]["runs"][name] for q in done]
        certified = [s["certified"] for s in spent if s.get("certified") is not None]
        out["runs"][name] = {
            key: round(scores["all"][key], 4),
            "by_template": {t: round(b[key], 4) for t, b in scores["by_template"].items()},
            "calls": round(float(np.mean([s["calls"] for s in spent])), 1),
            "raw_tokens": round(float(np.mean([s.get("raw_tokens", 0) for s in spent]))),
            "shared_tokens": round(float(np.mean([s.get("shared_tokens", 0) for s in spent]))),
            "certified": round(float(np.mean(certified)), 3) if certified else None,
        }
    out["k"] = k
    return out


def quest_table(summary: dict[str, Any]) -> str:
    key = f"R@{summary['k']}"
    templates = sorted({t for r in summary["runs"].values() for t in r["by_template"]})
    head = ["run", key, "calls", "raw tokens", "shared tokens", "certified", *templates]
    lines = [
        f"{summary['queries']} queries",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for name, r in summary["runs"].items():
        cells = [
            name,
            f"{r[key]:.3f}",
            f"{r['calls']:.1f}",
            str(r["raw_tokens"]),
            str(r["shared_tokens"]),
            "" if r["certified"] is None else f"{r['certified']:.2f}",
            *(f"{r['by_template'].get(t, float('nan')):.3f}" for t in templates),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- boolq


def _boolq(args: argparse.Namespace, out: Path, stop_at: float | None, log: Any) -> int:
    from experiments.rerankers_boolq import boolq_candidates
    from logic_rag.atomic import atomic_write_json
    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.strategy_settings import QualitySettings

    case = boolq_candidates(args.model, args.candidates, limit=args.limit)
    verifier = _verifier(args, out)
    rerankers = {
        "rerank": CandidateReranker(case.encoder, strategy="rerank"),
        "quality": CandidateReranker(
            case.encoder,
            strategy="quality",
            settings=QualitySettings(verifier=verifier, max_calls=args.budget),
        ),
    }
    cache = rerankers["rerank"].cache
    rerankers["quality"].cache = cache  # one set of candidate vectors
    rows_path = out / "rows.json"
    rows: dict[str, Any] = {}
    if rows_path.is_file():
        rows = json.loads(rows_path.read_text(encoding="utf-8"))
    for i, qid in enumerate(case.qids):
        if qid in rows:
            continue
        if stop_at is not None and time.time() > stop_at:
            log(f"deadline reached after {len(rows)} questions")
            break
        answer = next(iter(case.data.qrels[qid]))
        trap = case.traps[qid]
        row: dict[str, Any] = {}
        for name, reranker in rerankers.items():
            verifier.take_asked()
            docs, ranked = case.rerank(reranker, i, args.top_n)
            ids = [docs[r.position].id for r in ranked]
            info = (ranked[0].hit.logic or {}).get("llm") if ranked else None
            rank = ids.index(answer) + 1 if answer in ids else None
            trap_rank = ids.index(trap) + 1 if trap in ids else None
            row[name] = {
                "answer_rank": rank,
                "trap_rank": trap_rank,
                "trap_above": trap_rank is not None and (rank is None or trap_rank < rank),
                "calls": len(verifier.take_asked()),
                "certified": (info or {}).get("certified"),
            }
        rows[qid] = row
        atomic_write_json(rows_path, rows)
        summary = {
            name: {
                "questions": len(rows),
                "trap_above_answer": round(
                    float(np.mean([r[name]["trap_above"] for r in rows.values()])), 4
                ),
                "R@1": round(
                    float(np.mean([r[name]["answer_rank"] == 1 for r in rows.values()])), 4
                ),
                "calls": round(float(np.mean([r[name]["calls"] for r in rows.values()])), 1),
            }
            for name in rerankers
        }
        atomic_write_json(out / "results.json", summary)
        log(f"{len(rows)}/{len(case.qids)}: {json.dumps(summary)}")
    print(json.dumps(json.loads((out / "results.json").read_text()), indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    quest = sub.add_parser("quest", help="QUEST-attr dev: quality against llm-rerank")
    quest.add_argument("--index", required=True, help="an index of QUEST-attr's pages")
    quest.add_argument("--per-template", type=int, default=2)
    quest.add_argument("--k", type=int, default=20)
    quest.add_argument("--pool", type=int, default=40)
    boolq = sub.add_parser("boolq", help="boolq_not: trap above the answer")
    boolq.add_argument("--model", default="embeddinggemma-300m")
    boolq.add_argument("--candidates", type=int, default=20)
    boolq.add_argument("--limit", type=int, default=40)
    boolq.add_argument("--top-n", type=int, default=5)
    for one in (quest, boolq):
        one.add_argument("--out", required=True)
        one.add_argument("--llm", default="qwen2.5-1.5b", help="generator spec of the verifier")
        one.add_argument("--budget", type=int, default=60, help="quality's max_calls per query")
        one.add_argument("--deadline", default=None, help="HH:MM UTC: stop before this")
    args = p.parse_args(argv)
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    try:
        stop_at = _deadline(args.deadline)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
    except (ValueError, OSError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    from logic_rag.atomic import atomic_write_json

    settings = {k: v for k, v in vars(args).items() if k != "deadline"}
    if (out / "settings.json").is_file():
        before = json.loads((out / "settings.json").read_text(encoding="utf-8"))
        if before != settings:
            print(f"{PROG}: error: {out} was run with other settings: {before}", file=sys.stderr)
            return 2
    atomic_write_json(out / "settings.json", settings)
    return (_quest if args.what == "quest" else _boolq)(args, out, stop_at, log)


if __name__ == "__main__":
    raise SystemExit(main())
