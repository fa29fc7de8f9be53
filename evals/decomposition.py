"""How well a decomposer recovers QUEST's gold logical queries.

The decomposer sees the natural-language ``query`` field; the gold query is the record's
``metadata.template`` filled with the ``<mark>`` atoms of ``original_query``. Two numbers:

* ``template_accuracy``: share of records where ``to_template(prediction)`` equals the gold
  template (structure right, whatever the atom wording).
* ``atom_f1``: macro average over records of the F1 between predicted and gold atoms.
  Atoms are compared as sets of normalised tokens (lower-cased, punctuation removed,
  stopwords dropped, a plural ``s`` stripped), scored by the Dice coefficient
  ``2|A∩B| / (|A|+|B|)``; a predicted and a gold atom match when they have the same polarity
  (both negated or both not) and Dice >= :data:`ATOM_MATCH_THRESHOLD` = 0.6, one-to-one,
  greedily by highest Dice. 0.6 forgives a missing shared head ("Malaysia" vs "Books about
  Malaysia": Dice 0.67) but not a different object ("Books about Brunei" vs "Books about
  Malaysia": Dice 0.5). Paraphrased atoms (QUEST rewrites "Mammals" as "animals") do not
  match, so atom F1 is a lower bound on usable decompositions.

``python -m logic_rag.evals.decomposition`` prints the table for the rule decomposer on
the shared QUEST sample and LIMIT-in-QUEST-format files; ``--decomposer llm|auto`` (with
``--model``, default ``qwen2.5-coder-1.5b``) evaluates the LLM or the per-query choice instead,
``--limit N`` takes N records spread evenly over each file, and ``--cache`` keeps LLM
answers so a stopped run resumes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_rag.paths import shared_data_dir
from logic_rag.query.algebra import LogicalQuery, negated_atoms, positive_atoms
from logic_rag.query.decompose import Decomposer
from logic_rag.query.quest import parse_quest_record, read_quest_jsonl
from logic_rag.query.templates import TEMPLATES, to_template

__all__ = [
    "ATOM_MATCH_THRESHOLD",
    "DEFAULT_FILES",
    "normalise_atom",
    "atom_similarity",
    "atom_prf",
    "evaluate_decomposer",
    "format_table",
    "main",
]

#: Minimum Dice similarity of normalised token sets for two atoms to match.
ATOM_MATCH_THRESHOLD = 0.6

#: The shared files evaluated by :func:`main`, relative to the shared data folder.
DEFAULT_FILES: tuple[str, ...] = (
    "quest/quest_train_sample20.jsonl",
    "quest/attr/train_dev.jsonl",
    "limit/limit_quest_format_queries.jsonl",
)

_STOPWORDS = frozenset(
    "a an the of and or in on at to for from by with about that are is were was be also both "
    "not but which who whom what find me show list give all some any".split()
)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def normalise_atom(text: str, *, keep_stopwords: bool = False) -> frozenset[str]:
    """Content tokens of an atom: lower-case, no punctuation or stopwords, plural -s off."""
    tokens = set()
    for tok in _TOKEN.findall(text.lower()):
        if tok in _STOPWORDS and not keep_stopwords:
            continue
        if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
            tok = tok[:-1]
        tokens.add(tok)
    return frozenset(tokens)


def atom_similarity(a: str, b: str) -> float:
    """Dice coefficient of the normalised token sets.

    An atom made only of stopwords ("The Who") is compared with its stopwords kept.
    """
    ta, tb = normalise_atom(a), normalise_atom(b)
    if not ta or not tb:
        ta, tb = normalise_atom(a, keep_stopwords=True), normalise_atom(b, keep_stopwords=True)
    if not ta and not tb:
        return 0.0
    return 2 * len(ta & tb) / (len(ta) + len(tb))


def _signed(q: LogicalQuery) -> list[tuple[str, bool]]:
    return [(a.text, False) for a in positive_atoms(q)] + [(a.text, True) for a in negated_atoms(q)]


def atom_prf(
    predicted: Sequence[tuple[str, bool]],
    gold: Sequence[tuple[str, bool]],
    threshold: float = ATOM_MATCH_THRESHOLD,
) -> tuple[float, float, float]:
    """Precision, recall, F1 of (text, negated) atoms under greedy one-to-one matching."""
    if not predicted and not gold:
        return 1.0, 1.0, 1.0
    pairs = sorted(
        (
            (atom_similarity(p, g), i, j)
            for i, (p, pneg) in enumerate(predicted)
            for j, (g, gneg) in enumerate(gold)
            if pneg == gneg
        ),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    for score, i, j in pairs:
        if score < threshold:
            break
        if i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
    matched = len(used_p)
    precision = matched / len(predicted) if predicted else 0.0
    recall = matched / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def evaluate_decomposer(
    decomposer: Decomposer, records: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """Template accuracy and atom F1 of ``decomposer`` on QUEST-format ``records``.

    Returns ``n``, ``template_accuracy``, ``atom_precision``, ``atom_recall``, ``atom_f1``,
    ``mean_confidence``, ``n_failed`` (records where the decomposer raised ``ValueError``;
    they score 0) and ``per_template`` ({template: {n, template_accuracy, atom_f1}}).
    """
    rows: list[tuple[str, bool, float, float, float, float]] = []
    n_failed = 0
    for index, record in enumerate(records):
        gold = parse_quest_record(record)
        gold_template = record["metadata"]["template"]
        text = record.get("query")
        if not isinstance(text, str):
            raise ValueError(f"record {index}: field 'query' must be a string, got {text!r}")
        try:
            pred = decomposer.decompose(text)
        except ValueError:
            n_failed += 1
            rows.append((gold_template, False, 0.0, 0.0, 0.0, 0.0))
            continue
        p, r, f = atom_prf(_signed(pred.query), _signed(gold))
        hit = to_template(pred.query) == gold_template
        rows.append((gold_template, hit, p, r, f, pred.confidence))
    n = len(rows)

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    per_template: dict[str, dict[str, float | int]] = {}
    for template in TEMPLATES:
        sub = [row for row in rows if row[0] == template]
        if sub:
            per_template[template] = {
                "n": len(sub),
                "template_accuracy": mean([float(row[1]) for row in sub]),
                "atom_f1": mean([row[4] for row in sub]),
            }
    return {
        "n": n,
        "template_accuracy": mean([float(row[1]) for row in rows]),
        "atom_precision": mean([row[2] for row in rows]),
        "atom_recall": mean([row[3] for row in rows]),
        "atom_f1": mean([row[4] for row in rows]),
        "mean_confidence": mean([row[5] for row in rows]),
        "n_failed": n_failed,
        "per_template": per_template,
    }


def format_table(name: str, result: Mapping[str, Any]) -> str:
    """Plain-text table of one :func:`evaluate_decomposer` result."""
    lines = [
        f"{name}: n={result['n']}  template_acc={result['template_accuracy']:.3f}"
        f"  atom_P={result['atom_precision']:.3f}  atom_R={result['atom_recall']:.3f}"
        f"  atom_F1={result['atom_f1']:.3f}  mean_conf={result['mean_confidence']:.3f}"
        f"  failed={result['n_failed']}",
        f"  {'template':<32} {'n':>5} {'tmpl_acc':>9} {'atom_F1':>8}",
    ]
    for template, row in result["per_template"].items():
        lines.append(
            f"  {template:<32} {row['n']:>5} {row['template_accuracy']:>9.3f}"
            f" {row['atom_f1']:>8.3f}"
        )
    return "\n".join(lines)


def spread(records: list[Any], limit: int | None) -> list[Any]:
    """``limit`` records taken at even steps through ``records`` (all when None)."""
    if not limit or limit >= len(records):
        return records
    step = len(records) / limit
    return [records[int(i * step)] for i in range(limit)]


def main(argv: Sequence[str] | None = None) -> int:
    """Evaluate a decomposer on the shared QUEST-format files and print tables."""
    from logic_rag.query.rules import RuleDecomposer

    parser = argparse.ArgumentParser(
        prog="python -m logic_rag.evals.decomposition", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        help="QUEST-format JSONL files (default: the shared QUEST sample and LIMIT files)",
    )
    parser.add_argument("--data-dir", type=Path, default=None, help="shared data folder")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument(
        "--decomposer", choices=("rules", "llm", "auto"), default="rules", help="which one"
    )
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="generator spec for llm/auto")
    parser.add_argument(
        "--limit", type=int, default=None, help="records per file, spread evenly (default all)"
    )
    parser.add_argument("--cache", default=None, help="JSONL cache of LLM decompositions")
    args = parser.parse_args(argv)

    data_dir = args.data_dir or shared_data_dir()
    files = list(args.files) or [data_dir / f for f in DEFAULT_FILES]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        print(
            f"error: file(s) not found: {', '.join(missing)}; set LOGIC_RAG_DATA or pass"
            " --data-dir / file paths",
            file=sys.stderr,
        )
        return 2
    if args.decomposer == "rules":
        decomposer = RuleDecomposer()
    else:
        from logic_rag.query.auto import make_decomposer

        decomposer = make_decomposer(args.decomposer, model=args.model, cache_path=args.cache)
    results = {
        str(f): evaluate_decomposer(decomposer, spread(list(read_quest_jsonl(f)), args.limit))
        for f in files
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print("\n\n".join(format_table(Path(name).name, r) for name, r in results.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
