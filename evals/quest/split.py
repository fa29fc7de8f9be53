"""Split QUEST queries into train and dev so that no atom of dev is seen in training.

QUEST queries share atoms ("1990s films" appears in several); a model trained on one query
and evaluated on another with the same atom would be tested on what it memorised. Queries
are therefore grouped into connected components (two queries are connected when they share
an atom, compared case- and space-insensitively), and whole components go to one side.
Components are assigned in a seeded random order, each to the side whose share of the
component's template is further below its target, so every template is represented on
both sides in roughly the requested proportion.

``python -m logic_rag.evals.quest.split --queries train_dev.jsonl --out runs/split``
writes ``train.jsonl`` and ``dev.jsonl`` (the input lines, unchanged) and ``split.json``
(counts per template, the seed, the atoms' overlap: always 0).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json, atomic_write_jsonl
from logic_rag.errors import CorpusFormatError

from .data import marked_atoms

__all__ = ["QuestSplit", "split_by_atom", "read_records", "main"]


@dataclass(frozen=True)
class QuestSplit:
    """Records of each side, in input order."""

    train: list[dict[str, Any]]
    dev: list[dict[str, Any]]

    def summary(self, seed: int, dev_share: float) -> dict[str, Any]:
        """Counts per template and the atom overlap (0 by construction)."""

        def templates(rows: list[dict[str, Any]]) -> dict[str, int]:
            return dict(sorted(Counter(_template(r) for r in rows).items()))

        overlap = set().union(*map(_atoms, self.train)) & set().union(*map(_atoms, self.dev))
        return {
            "seed": seed,
            "dev_share": dev_share,
            "train": len(self.train),
            "dev": len(self.dev),
            "train_templates": templates(self.train),
            "dev_templates": templates(self.dev),
            "shared_atoms": len(overlap),
        }


def _normalise(atom: str) -> str:
    return re.sub(r"\s+", " ", atom.strip().lower())


def _atoms(record: dict[str, Any]) -> set[str]:
    meta = record.get("metadata") or {}
    listed = meta.get("atoms") if isinstance(meta, dict) else None
    raw = listed if isinstance(listed, list) else marked_atoms(record.get("original_query"))
    return {_normalise(a) for a in raw if isinstance(a, str) and a.strip()}


def _template(record: dict[str, Any]) -> str:
    meta = record.get("metadata") or {}
    return str(meta.get("template", "?")) if isinstance(meta, dict) else "?"


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The JSON objects of a QUEST JSONL file (``file:line`` errors for bad lines)."""
    from logic_rag.corpus import read_jsonl

    path = Path(path)
    rows = [row for _lineno, row in read_jsonl(path)]
    if not rows:
        raise CorpusFormatError(path, None, "the file holds no queries")
    return rows


def split_by_atom(
    records: Sequence[dict[str, Any]], *, dev_share: float = 0.5, seed: int = 0
) -> QuestSplit:
    """Split ``records`` so that train and dev share no atom (see the module docstring)."""
    if not 0.0 < dev_share < 1.0:
        raise ValueError(f"dev_share must be in (0, 1), got {dev_share}")
    parent = list(range(len(records)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, record in enumerate(records):
        for atom in sorted(_atoms(record)):
            if atom in owner:
                parent[find(i)] = find(owner[atom])
            else:
                owner[atom] = i
    components: dict[int, list[int]] = defaultdict(list)
    for i in range(len(records)):
        components[find(i)].append(i)
    groups = sorted(components.values())
    random.Random(seed).shuffle(groups)
    totals = Counter(_template(r) for r in records)
    on_dev: Counter[str] = Counter()
    on_train: Counter[str] = Counter()
    dev_rows: set[int] = set()
    for group in groups:
        template = Counter(_template(records[i]) for i in group).most_common(1)[0][0]
        dev_gap = dev_share * totals[template] - on_dev[template]
        train_gap = (1.0 - dev_share) * totals[template] - on_train[template]
        side = on_dev if dev_gap > train_gap else on_train
        for i in group:
            side[_template(records[i])] += 1
        if side is on_dev:
            dev_rows.update(group)
    return QuestSplit(
        train=[dict(r) for i, r in enumerate(records) if i not in dev_rows],
        dev=[dict(r) for i, r in enumerate(records) if i in dev_rows],
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m logic_rag.evals.quest.split", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--queries", required=True, help="QUEST-format JSONL file")
    parser.add_argument("--out", required=True, help="folder for train.jsonl, dev.jsonl")
    parser.add_argument("--dev-share", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        records = read_records(args.queries)
        split = split_by_atom(records, dev_share=args.dev_share, seed=args.seed)
    except (OSError, ValueError) as exc:  # a missing or bad file: one line, exit 2
        print(f"{parser.prog}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    out = Path(args.out)
    atomic_write_jsonl(out / "train.jsonl", split.train)
    atomic_write_jsonl(out / "dev.jsonl", split.dev)
    summary = split.summary(args.seed, args.dev_share)
    atomic_write_json(out / "split.json", summary)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
