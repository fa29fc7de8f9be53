"""Natural exclusions: does a decomposer find the NOT, and does it negate the right thing?

Two measurements for the exclusion phrasings people write:

* ``excluir``: on ExcluIR-style questions with the title of the page they exclude
  (``{"id", "query", "excluded"}`` per line), the share of queries whose decomposition holds
  a NOT (``not_found_rate`` is its complement) and the share whose best negated atom
  matches the excluded title with normalised token F1 >= :data:`MATCH_F1`. The title is
  compared without its parenthesis ("Marc Platt (dancer)" -> "Marc Platt") and with HTML
  entities decoded; tokens are SQuAD-normalised (lower case, punctuation and articles
  dropped). Decomposition only: no model is loaded.
* ``boolq``: on a BEIR-format folder with ``traps.tsv`` (query id, the passage the
  exclusion rules out), R@1, MRR@10 and the share of queries whose trap passage ranks
  above the answer, per retrieval strategy, through
  :class:`~logic_rag.logic_retriever.LogicRetriever`.

``python -m logic_rag.evals.exclusions excluir [--data FILE]`` and
``python -m logic_rag.evals.exclusions boolq [--data DIR] --model minilm --strategies
vanilla rerank`` print JSON.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import re
import string
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_rag.query.algebra import negated_atoms
from logic_rag.query.decompose import Decomposer

__all__ = [
    "MATCH_F1",
    "evaluate_excluir",
    "evaluate_traps",
    "main",
    "read_jsonl",
    "read_traps",
    "title_without_parenthesis",
    "token_f1",
    "trap_metrics",
]

#: Minimum token F1 between the negated atom and the excluded title to count as a match.
MATCH_F1 = 0.5

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = re.compile("[" + re.escape(string.punctuation + "–—“”‘’") + "]")


def _tokens(text: str) -> list[str]:
    text = _PUNCT.sub(" ", html.unescape(text).lower())
    return _ARTICLES.sub(" ", text).split()


def token_f1(predicted: str, gold: str) -> float:
    """SQuAD-style token F1 (multiset overlap) of two strings after normalisation."""
    p, g = _tokens(predicted), _tokens(gold)
    if not p or not g:
        return float(p == g)
    common: dict[str, int] = {}
    for tok in p:
        common[tok] = common.get(tok, 0) + 1
    overlap = 0
    for tok in g:
        if common.get(tok, 0) > 0:
            overlap += 1
            common[tok] -= 1
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(p), overlap / len(g)
    return 2 * precision * recall / (precision + recall)


def title_without_parenthesis(title: str) -> str:
    """ "Marc Platt (dancer)" -> "Marc Platt"; HTML entities decoded ("&amp;" -> "&")."""
    text = re.sub(r"\s*\([^)]*\)", "", html.unescape(title)).strip()
    return text or html.unescape(title).strip()


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file; a broken line raises ``ValueError`` naming it."""
    rows = []
    with Path(path).open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{lineno}: expected a JSON object")
            rows.append(row)
    return rows


def evaluate_excluir(
    decomposer: Decomposer,
    records: Iterable[Mapping[str, Any]],
    *,
    threshold: float = MATCH_F1,
    examples: int = 0,
) -> dict[str, Any]:
    """NOT-found and excluded-atom match rates of ``decomposer`` on ``records``.

    Each record needs ``query`` and ``excluded`` strings. Returns ``n``, ``not_found``
    (share with at least one negated atom), ``atom_match`` (share whose best negated atom
    reaches ``threshold`` F1 against the excluded title), ``mean_best_f1``,
    ``mean_negated_atoms`` (a decomposer that negates everything is visible here) and
    ``mean_confidence``; with ``examples`` > 0, that many misses of each kind.
    """
    n = found = matched = 0
    f1_sum = neg_sum = conf_sum = 0.0
    no_not: list[dict[str, str]] = []
    wrong: list[dict[str, str]] = []
    for index, record in enumerate(records):
        text, excluded = record.get("query"), record.get("excluded")
        if not isinstance(text, str) or not isinstance(excluded, str):
            raise ValueError(f"record {index}: 'query' and 'excluded' must be strings")
        result = decomposer.decompose(text)
        negated = [a.text for a in negated_atoms(result.query)]
        gold = title_without_parenthesis(excluded)
        best = max((token_f1(a, gold) for a in negated), default=0.0)
        n += 1
        found += bool(negated)
        matched += best >= threshold
        f1_sum += best
        neg_sum += len(negated)
        conf_sum += result.confidence
        if not negated and len(no_not) < examples:
            no_not.append({"query": text, "excluded": excluded})
        elif negated and best < threshold and len(wrong) < examples:
            wrong.append({"query": text, "excluded": excluded, "negated": " | ".join(negated)})
    if n == 0:
        raise ValueError("no records to evaluate")
    out: dict[str, Any] = {
        "n": n,
        "not_found": round(found / n, 4),
        "atom_match": round(matched / n, 4),
        "mean_best_f1": round(f1_sum / n, 4),
        "mean_negated_atoms": round(neg_sum / n, 4),
        "mean_confidence": round(conf_sum / n, 4),
    }
    if examples:
        out["examples"] = {"no_not": no_not, "wrong_atom": wrong}
    return out


# ------------------------------------------------------------------------------ traps


def read_traps(path: str | Path) -> dict[str, str]:
    """``traps.tsv``: query id -> trap passage id (a header line is allowed)."""
    traps: dict[str, str] = {}
    with Path(path).open(encoding="utf-8", newline="") as handle:
        for lineno, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or not "".join(row).strip():
                continue
            if len(row) < 2:
                raise ValueError(f"{path}:{lineno}: expected 'query-id<TAB>passage-id'")
            if lineno == 1 and row[0].strip().lower() in {"query-id", "qid", "query_id"}:
                continue
            traps[row[0].strip()] = row[1].strip()
    return traps


def trap_metrics(
    ranked: Mapping[str, Sequence[str]],
    answers: Mapping[str, Iterable[str]],
    traps: Mapping[str, str],
) -> dict[str, float]:
    """R@1, MRR@10 and the trap-above-answer share over the queries in ``ranked``.

    ``ranked`` maps a query id to passage ids, best first; ``answers`` to its relevant
    ids; ``traps`` to its trap id. A passage missing from the ranking ranks below every
    listed one, so a listed trap is above a missing answer; when both are missing the
    trap is not counted as above.
    """
    if not ranked:
        raise ValueError("no ranked queries")
    r1 = mrr = above = 0.0
    n_traps = 0
    for qid, ids in ranked.items():
        gold = set(answers.get(qid, ()))
        if not gold:
            raise ValueError(f"query {qid!r} has no answer passage")
        position = {pid: i for i, pid in enumerate(ids)}
        answer_rank = min((position[g] for g in gold if g in position), default=None)
        r1 += answer_rank == 0
        if answer_rank is not None and answer_rank < 10:
            mrr += 1.0 / (answer_rank + 1)
        trap = traps.get(qid)
        if trap is not None:
            n_traps += 1
            trap_rank = position.get(trap)
            if trap_rank is not None and (answer_rank is None or trap_rank < answer_rank):
                above += 1
    n = len(ranked)
    return {
        "R@1": round(r1 / n, 4),
        "MRR@10": round(mrr / n, 4),
        "trap_above_answer": round(above / n_traps, 4) if n_traps else 0.0,
        "queries": n,
    }


def evaluate_traps(
    folder: str | Path,
    *,
    model: str | None = None,
    strategies: Sequence[str] = ("vanilla", "rerank"),
    decomposer: Decomposer | None = None,
    split: str = "test",
    depth: int = 100,
) -> dict[str, Any]:
    """Index a BEIR folder with ``traps.tsv`` and score each strategy with :func:`trap_metrics`.

    Built through the public :class:`~logic_rag.logic_retriever.LogicRetriever` API, so the
    default decomposer and configuration are the ones users get. Returns ``{"model",
    "documents", "strategies": {name: metrics}, "decomposed": {...}}``, where
    ``decomposed`` counts the queries whose reading holds a NOT.
    """
    from logic_rag.corpus import load_beir
    from logic_rag.logic_retriever import LogicRetriever

    folder = Path(folder)
    traps_path = folder / "traps.tsv"
    if not traps_path.is_file():
        raise FileNotFoundError(f"{traps_path} not found: a trap benchmark needs traps.tsv")
    data = load_beir(folder, split)
    traps = read_traps(traps_path)
    qids = [q for q in data.queries if q in data.qrels]
    if not qids:
        raise ValueError(f"{folder}: no query has judgements in qrels/{split}.tsv")
    answers = {q: [d for d, rel in data.qrels[q].items() if rel > 0] for q in qids}
    retriever = LogicRetriever.build(data.corpus, model=model, decomposer=decomposer)
    texts = [data.queries[q] for q in qids]
    with_not = sum(bool(negated_atoms(retriever.decompose(t).query)) for t in texts)
    by_strategy = {}
    for name in strategies:
        results = retriever.search_batch(texts, k=depth, strategy=name)
        ranked = {q: [h.id for h in hits] for q, hits in zip(qids, results, strict=True)}
        by_strategy[name] = trap_metrics(ranked, answers, traps)
    return {
        "model": retriever.dense.encoder.name,
        "documents": len(data.corpus),
        "queries": len(qids),
        "decomposed": {"with_not": with_not, "share": round(with_not / len(qids), 4)},
        "strategies": by_strategy,
    }


# -------------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    """``excluir`` or ``boolq``: print the measurement as JSON; bad input exits 2."""
    from logic_rag.errors import LogicRagError
    from logic_rag.paths import shared_data_dir

    parser = argparse.ArgumentParser(
        prog="python -m logic_rag.evals.exclusions", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="task", required=True)
    ex = sub.add_parser("excluir", help="NOT found / excluded atom match, rules only")
    ex.add_argument("--data", type=Path, default=None, help="excluir_dev.jsonl")
    ex.add_argument("--examples", type=int, default=0, help="print this many misses")
    ex.add_argument("--limit", type=int, default=None, help="first N records")
    bq = sub.add_parser("boolq", help="R@1, MRR@10, trap-above-answer per strategy")
    bq.add_argument("--data", type=Path, default=None, help="BEIR folder with traps.tsv")
    bq.add_argument("--model", default="minilm", help="dense model (short name or folder)")
    bq.add_argument("--strategies", nargs="+", default=["vanilla", "rerank"])
    args = parser.parse_args(argv)

    try:
        if args.task == "excluir":
            from logic_rag.query.rules import RuleDecomposer

            path = args.data or shared_data_dir() / "negation/excluir_dev.jsonl"
            if not path.is_file():
                raise FileNotFoundError(f"{path} not found; pass --data or set LOGIC_RAG_DATA")
            rows = read_jsonl(path)[: args.limit]
            result = evaluate_excluir(RuleDecomposer(), rows, examples=args.examples)
        else:
            path = args.data or shared_data_dir() / "negation/boolq_not"
            if not path.is_dir():
                raise FileNotFoundError(f"{path} not found; pass --data or set LOGIC_RAG_DATA")
            result = evaluate_traps(path, model=args.model, strategies=args.strategies)
    except (FileNotFoundError, ValueError, KeyError, LogicRagError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
