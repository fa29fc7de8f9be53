"""Phase 2: the teacher's verdicts on (atom, page) pairs, resumable after a kill.

The plan (:func:`plan_pairs`, ``plan.jsonl``): each atom's candidates are the top of its
own search in the index plus a few seeded random pages, so not every negative is a hard
one; the atoms of one group are labelled on the union of their candidates, so composed
sets over them are decided by verdicts rather than guesses. Groups are taken whole, in
order, as long as they fit within ``max_pairs`` (the cost bound; a group that does not
fit is skipped, and only the first group is ever cut); a pair shared by two groups is
planned once.

Labelling (:func:`label_pairs`, ``labels.jsonl``): pairs go to the verifier in batches,
grouped by atom, and each batch is appended and flushed before the next starts. Every row
carries ``key`` = sha1(atom, page text), so a rerun skips the pairs already there and a
kill loses at most the batch in flight; a torn last line is cut off first. Any verifier
works (``llm:`` on llama.cpp, vLLM or an OpenAI-compatible server; a cross-encoder).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .state import AdaptError

__all__ = ["pair_key", "plan_pairs", "label_pairs", "read_labels"]


def pair_key(atom: str, text: str) -> str:
    """The content key of a pair: a changed page or atom is another pair."""
    digest = hashlib.sha1(atom.encode("utf-8", "surrogatepass"))
    digest.update(b"\x00")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def plan_pairs(
    retriever: Any,
    groups: Sequence[Sequence[str]],
    *,
    top_k: int,
    random_pages: int,
    max_pairs: int,
    seed: int,
) -> list[dict[str, Any]]:
    """``[{"key", "atom", "row", "doc"}]`` in labelling order; see the module docstring."""
    from logic_rag.pipeline.context import SearchContext

    docs = retriever.documents
    n = len(docs)
    atoms = sorted({a for g in groups for a in g})
    ctx = SearchContext(retriever.resources)
    depth = min(top_k, n)
    ctx.want(atoms, depth)
    ctx.run_wanted()
    pool: dict[str, list[int]] = {}
    for atom in atoms:
        rows = [int(r) for r in ctx.search(atom, depth)[1].tolist()]
        # Seeded by the atom, so an atom's random pages do not depend on the other atoms.
        rng = random.Random(f"{seed}\x00{atom}")
        extra = rng.sample(range(n), min(n, random_pages + len(rows)))
        rows += [r for r in extra if r not in rows][:random_pages]
        pool[atom] = rows
    plan: list[dict[str, Any]] = []
    seen: set[str] = set()
    for group in groups:
        rows = list(dict.fromkeys(r for a in group for r in pool[a]))
        items = []
        for atom in group:
            for row in rows:
                key = pair_key(atom, docs[row].content)
                if key not in seen:
                    seen.add(key)
                    items.append({"key": key, "atom": atom, "row": row, "doc": docs[row].id})
        if plan and len(plan) + len(items) > max_pairs:
            continue  # a smaller group further on may still fit
        plan += items[: max_pairs - len(plan)]
        if len(plan) >= max_pairs:
            break
    return plan


def read_labels(path: Path, *, repair: bool = False) -> Iterator[dict[str, Any]]:
    """Rows of ``labels.jsonl``; with ``repair`` a torn last line is cut off first."""
    if not path.is_file():
        return
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if repair and complete < len(data):
        with path.open("r+b") as handle:
            handle.truncate(complete)
    for line in data[:complete].decode("utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("key"), str):
            yield row


def label_pairs(
    retriever: Any,
    verifier: Any,
    plan: Sequence[dict[str, Any]],
    out: Path,
    *,
    batch: int,
    progress: bool = True,
    on_batch: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Label every planned pair not yet in ``out``; returns counts and timing for the card.

    ``on_batch`` is called after each batch is written (the driver records the time spent,
    so that an interrupted phase's seconds are not lost).
    """
    import time

    from tqdm.auto import tqdm

    from logic_rag.pipeline.context import SearchContext
    from logic_rag.verifiers.base import CheckRequest

    done = {row["key"] for row in read_labels(out, repair=True)}
    todo = [p for p in plan if p["key"] not in done]
    ctx = SearchContext(retriever.resources)
    labelled = 0
    start = time.perf_counter()
    with (
        out.open("a", encoding="utf-8") as handle,
        tqdm(
            total=len(plan),
            initial=len(plan) - len(todo),
            desc="labels",
            unit="pair",
            disable=not progress,
        ) as bar,
    ):
        for begin in range(0, len(todo), batch):
            chunk = todo[begin : begin + batch]
            by_atom: dict[str, list[dict[str, Any]]] = {}
            for item in chunk:
                by_atom.setdefault(item["atom"], []).append(item)
            names = list(by_atom)
            verifier.prepare(names, ctx)
            ctx.run_wanted()
            requests = [
                CheckRequest((a,), np.array([i["row"] for i in by_atom[a]], np.int64))
                for a in names
            ]
            lines = []
            for atom, checked in zip(names, verifier.check(requests, ctx), strict=True):
                for item, p in zip(by_atom[atom], checked.probs[0].tolist(), strict=True):
                    if not math.isfinite(p):
                        raise AdaptError(f"the teacher gave {p} for ({atom!r}, {item['doc']!r})")
                    row = {k: item[k] for k in ("key", "atom", "doc")}
                    lines.append(json.dumps({**row, "score": round(float(p), 6)}) + "\n")
            handle.write("".join(lines))
            handle.flush()
            labelled += len(chunk)
            bar.update(len(chunk))
            if on_batch is not None:
                on_batch()
    seconds = time.perf_counter() - start
    return {
        "pairs_planned": len(plan),
        "pairs_labelled_now": labelled,
        "pairs_resumed": len(plan) - len(todo),
        "teacher_seconds": round(seconds, 2),
        "pairs_per_second": round(labelled / seconds, 3) if labelled and seconds > 0 else None,
    }
