"""Quest+Variants: logical variants of sibling atoms with exact gold sets (LogiCoL, app. A.1).

LogiCoL augments QUEST so that each training batch can hold queries whose answer sets are
related by construction: from three sibling atoms ``A, B, C`` it composes ``A, B, C, A ∧ B,
A ∨ B, A ∖ B, A ∧ B ∧ C, A ∧ B ∖ C, A ∨ B ∨ C``. Gold sets come from the atoms' gold sets by set
algebra, so they are exact; the text comes from the QUEST templates (optionally paraphrased by
an LLM). All variants of one triple share a group id, which the batch sampler keeps together.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from logic_rag.atomic import atomic_write_jsonl
from logic_rag.query.algebra import LogicalQuery, atoms, evaluate, negated_atoms, positive_atoms
from logic_rag.query.algebra import render as render_query
from logic_rag.query.templates import from_template, to_template

from .examples import TrainingSet, TrainQuery, compute_distractors

__all__ = [
    "VARIANT_SHAPES",
    "add_variants",
    "build_variants",
    "compose_variants",
    "quest_text",
    "write_quest_format",
]

VARIANT_SHAPES: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("A", "_", (0,)),
    ("B", "_", (1,)),
    ("C", "_", (2,)),
    ("A&B", "_ that are also _", (0, 1)),
    ("A|B", "_ or _", (0, 1)),
    ("A-B", "_ that are not _", (0, 1)),
    ("A&B&C", "_ that are also both _ and _", (0, 1, 2)),
    ("A&B-C", "_ that are also _ but not _", (0, 1, 2)),
    ("A|B|C", "_ or _ or _", (0, 1, 2)),
)
"""The nine Quest+Variants shapes: (short name, QUEST template, atom slots from the triple)."""


def _slots(q: LogicalQuery) -> tuple[str | None, list[str]]:
    template = to_template(q)
    if template in ("_ that are not _", "_ that are also _ but not _"):
        names = [a.text for a in positive_atoms(q)] + [a.text for a in negated_atoms(q)]
    else:
        names = [a.text for a in atoms(q)]
    return template, names


def quest_text(q: LogicalQuery, *, marked: bool = False) -> str:
    """The QUEST template of ``q`` filled with its atoms (``<mark>``-ed with ``marked``), e.g.
    ``"Kinds of dog that are also Hunting dogs"``; queries without a template are rendered."""
    template, names = _slots(q)
    if template is None:
        return render_query(q)
    parts = template.split("_")
    out = parts[0]
    for name, tail in zip(names, parts[1:], strict=True):
        out += (f"<mark>{name}</mark>" if marked else name) + tail
    return out


def compose_variants(
    triple: Sequence[str], atom_sets: Mapping[str, frozenset[str]]
) -> list[tuple[str, LogicalQuery, frozenset[str]]]:
    """All nine variants of ``(A, B, C)`` as ``(shape name, query, exact gold set)``."""
    universe = frozenset().union(*(atom_sets[a] for a in triple))
    out = []
    for name, template, slots in VARIANT_SHAPES:
        q = from_template(template, [triple[s] for s in slots])
        out.append((name, q, frozenset(evaluate(q, atom_sets, universe))))
    return out


def _default_domain(atom: str) -> str:
    from logic_rag.query.heads import head_noun

    try:
        return head_noun(atom).lower()
    except Exception:  # noqa: BLE001 - a heuristic; no head just means no preference
        return ""


def build_variants(
    atoms: Mapping[str, Iterable[str]],
    *,
    seed: int = 0,
    groups: int | None = None,
    min_size: int = 2,
    max_size: int = 200,
    verbalise: Callable[[LogicalQuery], str] | None = None,
    paraphrase: Callable[[str], str] | None = None,
    domains: Mapping[str, str] | None = None,
    min_variants: int = 4,
) -> list[TrainQuery]:
    """Quest+Variants queries from atoms and their gold sets.

    Each atom is tried once as ``A`` (in seeded order, until ``groups`` groups are made). ``B``
    overlaps ``A`` non-trivially (``A ∩ B`` and ``A ∖ B`` both non-empty), preferring the same
    domain (``domains[atom]``, else the atom's head noun); ``C`` is the candidate that keeps the
    most variants inside ``[min_size, max_size]`` (same domain preferred). Variants with a gold
    set outside that range are dropped, and so is a triple left with fewer than
    ``min_variants`` variants or one already used. Distractors (LORE N1) are filled in from
    the atoms' gold sets.

    Args:
        verbalise: text of a logical query; default :func:`quest_text` (the QUEST template).
        paraphrase: optional hook (e.g. an LLM) applied to each verbalised text.
    """
    if min_size < 1 or max_size < min_size:
        raise ValueError(f"need 1 <= min_size <= max_size, got {min_size}, {max_size}")
    sets = {" ".join(a.split()): frozenset(docs) for a, docs in atoms.items()}
    sets = {a: s for a, s in sets.items() if s}
    domain = {a: (domains.get(a, "") if domains is not None else _default_domain(a)) for a in sets}
    by_doc: dict[str, list[str]] = {}
    for name in sorted(sets):
        for doc in sets[name]:
            by_doc.setdefault(doc, []).append(name)
    rng = random.Random(seed)
    order = sorted(sets)
    rng.shuffle(order)
    text_of = verbalise or quest_text
    used: set[frozenset[str]] = set()
    result: list[TrainQuery] = []
    n_groups = 0

    def in_range(docs: frozenset[str]) -> bool:
        return min_size <= len(docs) <= max_size

    for a in order:
        if groups is not None and n_groups >= groups:
            break
        sa = sets[a]
        overlapping = sorted({b for d in sa for b in by_doc[d]} - {a})
        bs = [b for b in overlapping if not sa <= sets[b]]  # A ∩ B ≠ ∅ by construction
        if not bs:
            continue
        same = [b for b in bs if domain[b] == domain[a]]
        b = rng.choice(same or bs)
        near = sorted({c for d in sa | sets[b] for c in by_doc[d]} - {a, b})
        if len(near) > 60:
            near = rng.sample(near, 60)
        if not near:
            continue
        best, best_score = None, -1.0
        for c in near:
            valid = sum(in_range(g) for _, _, g in compose_variants((a, b, c), sets))
            score = valid + (0.5 if domain[c] == domain[a] else 0.0) + rng.random() * 0.01
            if score > best_score:
                best, best_score = c, score
        triple = (a, b, best)
        key = frozenset(triple)
        if best is None or key in used:
            continue
        variants = [(n, q, g) for n, q, g in compose_variants(triple, sets) if in_range(g)]
        if len(variants) < min_variants:
            continue
        used.add(key)
        group = f"v{n_groups}"
        n_groups += 1
        for name, q, gold in variants:
            text = text_of(q)
            if paraphrase is not None:
                text = paraphrase(text)
            result.append(
                TrainQuery(
                    query_id=f"{group}:{name}",
                    text=text,
                    gold=tuple(sorted(gold)),
                    group=group,
                    logical_query=q,
                    template=to_template(q),
                    distractors=compute_distractors(q, gold, sets),
                )
            )
    return result


def add_variants(
    training_set: TrainingSet,
    atoms_path: str | Path,
    *,
    split: str = "train",
    seed: int = 0,
) -> TrainingSet:
    """``training_set`` plus Quest+Variants built from the atoms of one split.

    ``atoms_path`` is JSONL with ``atom`` and ``docs`` (and optional ``domain``, ``split``),
    as ``logic-rag world`` and the WordNet builder write it. Only rows whose ``split`` is
    ``split``, or that have no ``split``, are used, so held-out atoms never reach training;
    gold documents outside the training set's documents are dropped. Variant ids and groups
    are prefixed ``variant:``; a variant never replaces or repeats a query already there.
    """
    import json
    from dataclasses import replace

    from logic_rag.errors import CorpusFormatError

    atoms: dict[str, list[str]] = {}
    domains: dict[str, str] = {}
    path = Path(atoms_path)
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                name, docs = row["atom"], row["docs"]
            except (ValueError, KeyError, TypeError) as exc:
                raise CorpusFormatError(path, lineno, f"not an atom row ({exc})") from None
            if row.get("split", split) != split:
                continue
            atoms[name] = [d for d in docs if d in training_set.documents]
            if isinstance(row.get("domain"), str):
                domains[name] = row["domain"]
    taken = {q.query_id for q in training_set.queries}
    # A split that is itself Quest+Variants (the WordNet set) would otherwise get every
    # query a second time: a variant equal in text and gold set to a query is skipped.
    seen = {(q.text, frozenset(q.gold)) for q in training_set.queries}
    extra = [
        replace(q, query_id=f"variant:{q.query_id}", group=f"variant:{q.group}")
        for q in build_variants(atoms, seed=seed, domains=domains)
        if f"variant:{q.query_id}" not in taken and (q.text, frozenset(q.gold)) not in seen
    ]
    return TrainingSet(training_set.queries + extra, training_set.documents)


def write_quest_format(queries: Sequence[TrainQuery], path: str | Path) -> None:
    """Write queries as QUEST JSONL (atomically): ``query``, ``docs``, ``original_query`` with
    ``<mark>`` atoms, ``metadata`` with ``template``, ``atoms``, ``group`` and ``id`` (read back
    by :func:`~logic_rag.finetune.data.examples.load_quest_training_set`)."""

    def rows() -> Iterable[dict[str, object]]:
        for q in queries:
            lq = q.logical_query
            template, names = _slots(lq) if lq is not None else (None, [])
            yield {
                "query": q.text,
                "docs": list(q.gold),
                "original_query": quest_text(lq, marked=True) if template else q.text,
                "scores": None,
                "metadata": {
                    "template": template,
                    "atoms": names,
                    "group": q.group,
                    "id": q.query_id,
                    "relevance_ratings": None,
                    "evidence_ratings": None,
                    "attributions": None,
                },
            }

    atomic_write_jsonl(Path(path), rows())
