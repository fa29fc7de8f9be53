"""Training examples for logic-aware retrievers: queries with gold sets, groups and distractors.

Set-retrieval training needs more than (query, document) pairs: every query has a *set* of
gold documents (one positive is drawn per step, and any in-batch gold document counts as a
positive), queries that share atoms form a *logical group* (LogiCoL batches groups together
so its subset / exclusion regularisers have pairs to act on), and LORE needs *distractors*
(documents that satisfy some constraints of the query but not all). This module holds that
table (:class:`TrainingSet`), reads it from QUEST-format files and turns it into the
``datasets.Dataset`` layouts the losses in :mod:`logic_rag.finetune.losses` expect.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from logic_rag.errors import CorpusFormatError, LogicRagError
from logic_rag.finetune.losses.relations import LABEL_NEGATIVE_DOC_ID
from logic_rag.query.algebra import LogicalQuery, negated_atoms
from logic_rag.query.algebra import atoms as query_atoms
from logic_rag.query.templates import TEMPLATES, from_template

if TYPE_CHECKING:
    import datasets

    from logic_rag.finetune.losses.relations import GoldSetRelations

__all__ = [
    "TrainQuery",
    "TrainingSet",
    "TrainingDataError",
    "load_quest_training_set",
    "load_documents_map",
    "compute_distractors",
    "group_by_shared_atoms",
    "to_contrastive_dataset",
    "to_lore_dataset",
    "PositiveResampler",
    "DEFAULT_MAX_GROUP_SIZE",
]

DEFAULT_MAX_GROUP_SIZE = 12
"""Largest logical group the loader forms (a batch holds a few groups plus random queries)."""


class TrainingDataError(LogicRagError, ValueError):
    """The training queries do not fit their documents (e.g. a gold document is missing)."""


@dataclass(frozen=True)
class TrainQuery:
    """One training query with its exact gold set and logical metadata.

    Attributes:
        query_id: unique id inside a :class:`TrainingSet`.
        text: the natural-language query the encoder sees.
        gold: ids of the gold documents (QUEST: titles), no duplicates.
        group: logical group (queries sharing atoms) or None.
        logical_query: the gold :data:`LogicalQuery`, when known.
        template: the QUEST template of ``logical_query``, when it has one.
        distractors: documents matching some but not all constraints (LORE's N1), most
            constraints satisfied first.
        hard_negatives: documents known *not* to be gold that a retriever confuses with it
            (pages of a negated atom, pages in only some atoms of an intersection, mined
            near-misses); used as extra negative columns by
            :func:`to_contrastive_dataset` with ``hard_negatives=True``.
    """

    query_id: str
    text: str
    gold: tuple[str, ...]
    group: str | None = None
    logical_query: LogicalQuery | None = None
    template: str | None = None
    distractors: tuple[str, ...] = ()
    hard_negatives: tuple[str, ...] = ()


@dataclass
class TrainingSet:
    """Queries plus the document texts they point to (doc id -> text as the indexer embeds it:
    ``title + "\\n" + text`` for QUEST documents, see :attr:`logic_rag.corpus.Document.content`)."""

    queries: list[TrainQuery]
    documents: dict[str, str]
    _doc_index: dict[str, int] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for q in self.queries:
            if q.query_id in seen:
                raise TrainingDataError(
                    f"duplicate query_id {q.query_id!r}; query ids must be unique"
                )
            seen.add(q.query_id)
            if not q.gold:
                raise TrainingDataError(f"query {q.query_id!r} has an empty gold set")
            missing = [
                d for d in (*q.gold, *q.distractors, *q.hard_negatives) if d not in self.documents
            ]
            if missing:
                raise TrainingDataError(
                    f"query {q.query_id!r} names {len(missing)} document(s) that are not in the "
                    f"documents, e.g. {missing[0]!r}; pass the documents file the queries were "
                    "made for, or drop those queries"
                )

    def __len__(self) -> int:
        return len(self.queries)

    def doc_index(self) -> dict[str, int]:
        """Stable int id of every document (its position in :attr:`documents`)."""
        if self._doc_index is None or len(self._doc_index) != len(self.documents):
            self._doc_index = {doc: i for i, doc in enumerate(self.documents)}
        return self._doc_index

    def group_index(self) -> dict[str, int]:
        """Stable int id of every group (order of first appearance); ungrouped queries get none."""
        index: dict[str, int] = {}
        for q in self.queries:
            if q.group is not None and q.group not in index:
                index[q.group] = len(index)
        return index

    def gold_sets(self) -> dict[int, frozenset[int]]:
        """Query int id (position in :attr:`queries`) -> int ids of its gold documents."""
        di = self.doc_index()
        return {i: frozenset(di[d] for d in q.gold) for i, q in enumerate(self.queries)}

    def relation_pairs(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """``(subset_pairs, exclusion_pairs)`` between queries of the same group.

        Decided on the gold sets themselves (exact set algebra, not the templates): ``(i, j)``
        is a subset pair when ``gold(i)`` is a proper subset of ``gold(j)``; ``(i, j)`` with
        ``i < j`` is an exclusion pair when the two gold sets are disjoint.
        """
        gold = self.gold_sets()
        members: dict[str, list[int]] = {}
        for i, q in enumerate(self.queries):
            if q.group is not None:
                members.setdefault(q.group, []).append(i)
        subset: list[tuple[int, int]] = []
        exclusion: list[tuple[int, int]] = []
        for ids in members.values():
            for a in ids:
                for b in ids:
                    if a == b:
                        continue
                    if gold[a] < gold[b]:
                        subset.append((a, b))
                    if a < b and gold[a].isdisjoint(gold[b]):
                        exclusion.append((a, b))
        return subset, exclusion

    def relations(self) -> GoldSetRelations:
        """Relation provider for LogiCoL / SupCon losses (ids as in :func:`to_contrastive_dataset`)."""
        from logic_rag.finetune.losses.relations import GoldSetRelations

        subset, exclusion = self.relation_pairs()
        return GoldSetRelations(self.gold_sets(), subset, exclusion)

    def subset(self, query_ids: Iterable[str]) -> TrainingSet:
        """A training set with only the given queries (same documents, order kept)."""
        wanted = set(query_ids)
        unknown = wanted - {q.query_id for q in self.queries}
        if unknown:
            raise KeyError(f"unknown query ids: {sorted(unknown)[:5]}")
        return TrainingSet([q for q in self.queries if q.query_id in wanted], self.documents)

    def split_by_group(
        self, fractions: Mapping[str, float], *, seed: int = 0
    ) -> dict[str, TrainingSet]:
        """Split into named parts by whole groups (ungrouped queries are their own unit), so no
        group straddles two parts; e.g. ``split_by_group({"train": 0.8, "val": 0.2})``."""
        if not fractions or any(f < 0 for f in fractions.values()) or sum(fractions.values()) <= 0:
            raise ValueError(f"fractions must be non-negative with a positive sum, got {fractions}")
        units: dict[str, list[str]] = {}
        for q in self.queries:
            key = q.group if q.group is not None else f"\0{q.query_id}"
            units.setdefault(key, []).append(q.query_id)
        keys = list(units)
        random.Random(seed).shuffle(keys)
        total = sum(fractions.values())
        n_queries = len(self.queries)
        names = list(fractions)
        parts: dict[str, list[str]] = {name: [] for name in names}
        targets = {name: fractions[name] / total * n_queries for name in names}
        for key in keys:
            # Give the unit to the part that is furthest below its target share.
            name = max(names, key=lambda n: (targets[n] - len(parts[n]), -names.index(n)))
            parts[name].extend(units[key])
        return {name: self.subset(ids) for name, ids in parts.items()}

    def with_distractors(self, atom_gold: Mapping[str, Iterable[str]]) -> TrainingSet:
        """A copy whose queries carry distractors computed from ``atom_gold`` (atom -> docs)."""
        sets = {
            a: frozenset(d for d in docs if d in self.documents) for a, docs in atom_gold.items()
        }
        queries = [
            replace(q, distractors=compute_distractors(q.logical_query, q.gold, sets))
            if q.logical_query is not None
            else q
            for q in self.queries
        ]
        return TrainingSet(queries, self.documents)


# ------------------------------------------------------------------------------ distractors


def compute_distractors(
    query: LogicalQuery | None,
    gold: Iterable[str],
    atom_gold: Mapping[str, frozenset[str] | set[str]],
) -> tuple[str, ...]:
    """Documents in the gold set of some atom of ``query`` but not in ``gold`` (LORE's N1).

    They look relevant (they match at least one named constraint) but are wrong. Sorted by the
    number of constraints they satisfy (a positive atom is satisfied by membership, a negated
    one by non-membership), most first, then by id. Atoms without a gold set are skipped.
    """
    if query is None:
        return ()
    gold_set = set(gold)
    names = [a.text for a in query_atoms(query) if a.text in atom_gold]
    negated = {a.text for a in negated_atoms(query)}
    candidates: set[str] = set()
    for name in names:
        candidates |= set(atom_gold[name])
    candidates -= gold_set

    def satisfied(doc: str) -> int:
        return sum((doc in atom_gold[n]) != (n in negated) for n in names)

    return tuple(sorted(candidates, key=lambda d: (-satisfied(d), d)))


# ----------------------------------------------------------------------------------- groups


def group_by_shared_atoms(
    query_atoms: Sequence[Iterable[str]], *, max_group_size: int = DEFAULT_MAX_GROUP_SIZE
) -> list[int | None]:
    """Group queries connected by shared atoms; components larger than ``max_group_size`` are
    cut into pieces along a breadth-first order, so neighbours in a piece still share atoms.

    Returns one group number per query; a query that shares no atom with another, or is the
    single query left over at the end of a cut component, gets None.
    """
    if max_group_size < 2:
        raise ValueError(f"max_group_size must be >= 2, got {max_group_size}")
    by_atom: dict[str, list[int]] = {}
    qatoms = [list(dict.fromkeys(a)) for a in query_atoms]
    for i, names in enumerate(qatoms):
        for name in names:
            by_atom.setdefault(name, []).append(i)
    result: list[int | None] = [None] * len(qatoms)
    visited = [False] * len(qatoms)
    next_group = 0
    for start in range(len(qatoms)):
        if visited[start]:
            continue
        order, queue = [], [start]
        visited[start] = True
        while queue:
            i = queue.pop(0)
            order.append(i)
            for name in qatoms[i]:
                for j in by_atom[name]:
                    if not visited[j]:
                        visited[j] = True
                        queue.append(j)
        if len(order) < 2:
            continue
        pieces = [order[k : k + max_group_size] for k in range(0, len(order), max_group_size)]
        for piece in pieces:
            if len(piece) < 2:
                continue  # a singleton tail stays ungrouped: a group of one relates nothing
            for i in piece:
                result[i] = next_group
            next_group += 1
    return result


# ----------------------------------------------------------------------------------- loader


def load_documents_map(path: str | Path) -> dict[str, str]:
    """Document id -> embedded text (title + text) from any corpus file logic-rag reads."""
    from logic_rag.corpus import iter_documents

    documents: dict[str, str] = {}
    for doc in iter_documents(path):
        documents[doc.id] = doc.content
    return documents


def _read_atoms(path: Path) -> dict[str, frozenset[str]]:
    from logic_rag.corpus import read_jsonl

    result: dict[str, frozenset[str]] = {}
    for lineno, row in read_jsonl(path):
        name, docs = row.get("atom"), row.get("docs")
        if not isinstance(name, str) or not name.strip():
            raise CorpusFormatError(path, lineno, "field 'atom' must be a non-empty string")
        if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
            raise CorpusFormatError(path, lineno, "field 'docs' must be a list of document ids")
        result[" ".join(name.split())] = frozenset(docs)
    return result


def _logical_query(record: Mapping[str, Any]) -> tuple[LogicalQuery | None, str | None]:
    """Gold query from the ``<mark>`` atoms, else from ``metadata.atoms``; (None, None) if neither."""
    from logic_rag.query.quest import parse_quest_record

    metadata = record.get("metadata")
    template = metadata.get("template") if isinstance(metadata, Mapping) else None
    if template not in TEMPLATES:
        return None, None
    if isinstance(record.get("original_query"), str) and "<mark>" in record["original_query"]:
        try:
            return parse_quest_record(record, strict=False), template
        except ValueError:
            pass
    names = metadata.get("atoms") if isinstance(metadata, Mapping) else None
    if isinstance(names, list) and all(isinstance(n, str) and n.strip() for n in names):
        try:
            return from_template(template, [" ".join(n.split()) for n in names]), template
        except ValueError:
            pass
    return None, None


def load_quest_training_set(
    queries: str | Path,
    documents: str | Path | Mapping[str, str],
    *,
    atoms: str | Path | None = None,
    limit: int | None = None,
    max_group_size: int = DEFAULT_MAX_GROUP_SIZE,
    missing: Literal["error", "drop"] = "error",
) -> TrainingSet:
    """Read QUEST-format queries and their documents into a :class:`TrainingSet`.

    Args:
        queries: JSONL with ``query``, ``docs`` and optionally ``original_query`` (``<mark>``
            atoms) and ``metadata`` (``template``, ``atoms``, ``group``, ``id``).
        documents: the documents file (QUEST ``{"title", "text"}``, BEIR or plain JSONL) or a
            ready id -> text mapping.
        atoms: optional ``atoms.jsonl`` (``{"atom", "docs"}`` rows) used for distractors.
        limit: read only the first ``limit`` queries.
        max_group_size: cap on groups formed from shared atoms.
        missing: ``"error"`` (default) fails on a gold document absent from the documents;
            ``"drop"`` removes such ids and skips queries left without gold.

    Groups: ``metadata.group`` when every record has one (files written by
    :func:`logic_rag.finetune.data.variants.write_quest_format`), else queries connected by
    shared atoms (:func:`group_by_shared_atoms`). Malformed lines raise
    :class:`~logic_rag.errors.CorpusFormatError` naming ``file:line``.
    """
    from logic_rag.corpus import read_jsonl

    qpath = Path(queries)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    docs = dict(documents) if isinstance(documents, Mapping) else load_documents_map(documents)
    doc_source = "the documents mapping" if isinstance(documents, Mapping) else str(documents)
    rows: list[tuple[TrainQuery, list[str], str | None]] = []
    ids: set[str] = set()
    for lineno, record in read_jsonl(qpath):
        if limit is not None and len(rows) >= limit:
            break
        text, gold = record.get("query"), record.get("docs")
        if not isinstance(text, str) or not text.strip():
            raise CorpusFormatError(qpath, lineno, "field 'query' must be a non-empty string")
        if not isinstance(gold, list) or not all(isinstance(d, str) for d in gold):
            raise CorpusFormatError(
                qpath, lineno, "field 'docs' must be a list of gold document ids (QUEST: titles)"
            )
        absent = [d for d in gold if d not in docs]
        if absent and missing == "error":
            raise CorpusFormatError(
                qpath,
                lineno,
                f"gold document {absent[0]!r} ({len(absent)} of {len(gold)} missing) is not in "
                f"{doc_source}; pass the documents the queries were made for, or "
                "missing='drop' to skip such documents",
            )
        gold = list(dict.fromkeys(d for d in gold if d in docs))
        if not gold:
            if missing == "drop":
                continue
            raise CorpusFormatError(qpath, lineno, "field 'docs' is empty: a query needs gold")
        try:
            lq, template = _logical_query(record)
        except (TypeError, ValueError) as exc:
            raise CorpusFormatError(qpath, lineno, str(exc)) from None
        metadata = record.get("metadata") if isinstance(record.get("metadata"), Mapping) else {}
        qid = metadata.get("id", record.get("id"))
        qid = str(qid) if isinstance(qid, str | int) else f"{qpath.stem}:{lineno}"
        if qid in ids:
            raise CorpusFormatError(qpath, lineno, f"duplicate query id {qid!r}")
        ids.add(qid)
        group = metadata.get("group")
        atom_names = [a.text for a in query_atoms(lq)] if lq is not None else []
        query = TrainQuery(qid, " ".join(text.split()), tuple(gold), None, lq, template)
        rows.append((query, atom_names, group if isinstance(group, str | int) else None))

    if rows and all(g is not None for _, _, g in rows):
        groups: list[str | None] = [str(g) for _, _, g in rows]
    else:
        numbers = group_by_shared_atoms([a for _, a, _ in rows], max_group_size=max_group_size)
        groups = [None if n is None else f"g{n}" for n in numbers]
    out = [replace(q, group=g) for (q, _, _), g in zip(rows, groups, strict=True)]
    ts = TrainingSet(out, docs)
    if atoms is not None:
        ts = ts.with_distractors(_read_atoms(Path(atoms)))
    return ts


# ------------------------------------------------------------------------------- datasets


def _stable_seed(*parts: object) -> int:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


class PositiveResampler:
    """Dataset transform that draws a fresh gold document for every row at every access.

    For each query the gold documents are visited in a seeded random order, reshuffled after
    each full pass (so across epochs every gold document is seen, none twice in a row within
    a pass). Which document the ``k``-th access of a query gets depends only on ``(seed, query,
    k)``: two datasets built with the same seed give the same positives for the same sequence
    of accesses. Any read that goes through the transform counts as an access, including a
    whole-column read such as the sampler's ``dataset["label"]``.
    """

    def __init__(self, ts: TrainingSet, seed: int = 0) -> None:
        self.seed = int(seed)
        di = ts.doc_index()
        self.gold = [[di[d] for d in q.gold] for q in ts.queries]
        self.negatives = [[di[d] for d in q.hard_negatives] for q in ts.queries]
        self.texts = list(ts.documents.values())
        self.draws = [0] * len(ts.queries)
        self.negative_draws = [0] * len(ts.queries)
        self._orders: dict[tuple[int, int], list[int]] = {}
        self._negative_orders: dict[tuple[int, int], list[int]] = {}

    def reset(self) -> None:
        """Start every query's sequence of positives (and hard negatives) again."""
        self.draws = [0] * len(self.draws)
        self.negative_draws = [0] * len(self.negative_draws)

    def draw_negative(self, qi: int) -> int:
        """The next hard negative of query ``qi``: its :attr:`TrainQuery.hard_negatives` in a
        seeded order reshuffled after each pass, or, for a query without any, a seeded random
        document outside its gold set (so every row has a negative column)."""
        k = self.negative_draws[qi]
        self.negative_draws[qi] += 1
        pool = self.negatives[qi]
        if not pool:
            gold = set(self.gold[qi])
            rng = random.Random(_stable_seed(self.seed, "neg", qi, k))
            for _ in range(100):
                doc = rng.randrange(len(self.texts))
                if doc not in gold:
                    return doc
            raise TrainingDataError(f"query {qi}: no document outside its gold set to use")
        cycle, pos = divmod(k, len(pool))
        order = self._negative_orders.get((qi, cycle))
        if order is None:
            order = list(pool)
            random.Random(_stable_seed(self.seed, "neg", qi, cycle)).shuffle(order)
            self._negative_orders = {
                key: v for key, v in self._negative_orders.items() if key[0] != qi
            }
            self._negative_orders[(qi, cycle)] = order
        return order[pos]

    def draw(self, qi: int) -> int:
        """The next positive document id of query ``qi``."""
        gold = self.gold[qi]
        k = self.draws[qi]
        self.draws[qi] += 1
        cycle, pos = divmod(k, len(gold))
        order = self._orders.get((qi, cycle))
        if order is None:
            order = list(gold)
            random.Random(_stable_seed(self.seed, qi, cycle)).shuffle(order)
            self._orders = {key: v for key, v in self._orders.items() if key[0] != qi}
            self._orders[(qi, cycle)] = order
        return order[pos]

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        out = dict(batch)
        labels = [list(row) for row in batch["label"]]
        positives = []
        negatives = []
        for label in labels:
            doc = self.draw(int(label[0]))
            label[1] = doc
            positives.append(self.texts[doc])
            if "negative" in batch:
                neg = self.draw_negative(int(label[0]))
                label[LABEL_NEGATIVE_DOC_ID] = neg
                negatives.append(self.texts[neg])
        out["label"] = labels
        if "positive" in batch:
            out["positive"] = positives
        if "negative" in batch:
            out["negative"] = negatives
        return out


def to_contrastive_dataset(
    ts: TrainingSet, *, seed: int = 0, hard_negatives: bool = False
) -> datasets.Dataset:
    """``(anchor, positive[, negative], label)`` rows for SupCon / LogiCoL training.

    ``anchor`` is the query text, ``positive`` the text of one gold document, re-drawn at every
    access (:class:`PositiveResampler`), ``label`` is ``[query_id, positive_doc_id, group_id]``
    with the int ids of :meth:`TrainingSet.relations` (group -1 for ungrouped queries), the
    layout :class:`~logic_rag.finetune.sampler.LogicalGroupBatchSampler` and
    :class:`~logic_rag.finetune.losses.relations.GoldSetRelations` read.

    With ``hard_negatives`` every row also gets a ``negative`` column (one of the query's
    :attr:`TrainQuery.hard_negatives`, re-drawn at every access) and its document id as a
    fourth label entry, so the relation provider can tell when a row's hard negative is gold
    for *another* query of the batch (a page in ``A ∧ B`` is a hard negative of ``A ∖ B``
    and a positive of ``A ∧ B``): such a page counts as a positive for that query instead
    of being pushed away from it.
    """
    import datasets

    if not ts.queries:
        raise TrainingDataError("the training set has no queries")
    di, gi = ts.doc_index(), ts.group_index()
    columns: dict[str, list[Any]] = {
        "anchor": [q.text for q in ts.queries],
        "positive": [ts.documents[q.gold[0]] for q in ts.queries],
    }
    labels = [
        [i, di[q.gold[0]], gi[q.group] if q.group is not None else -1]
        for i, q in enumerate(ts.queries)
    ]
    if hard_negatives:
        # Placeholders: the transform draws the actual negative (and its id) at each access.
        columns["negative"] = [ts.documents[q.gold[0]] for q in ts.queries]
        labels = [label + [-1] for label in labels]
    columns["label"] = labels
    data = datasets.Dataset.from_dict(columns)
    return data.with_transform(PositiveResampler(ts, seed))


def to_lore_dataset(
    ts: TrainingSet, *, num_distractors: int = 3, num_negatives: int = 4, seed: int = 0
) -> datasets.Dataset:
    """``(query, cand_0 .. cand_k, label)`` rows for :class:`~logic_rag.finetune.losses.LoreLoss`.

    ``cand_0`` is one gold document (seeded draw), then up to ``num_distractors`` distractors
    (seeded draw from the query's distractors, missing ones padded with ``""`` and tier -100),
    then ``num_negatives`` random documents outside the gold set and the distractors.
    ``label`` holds the tiers (1 positive, 0 distractor, -1 negative, -100 padding).
    """
    import datasets

    if num_distractors < 0 or num_negatives < 0 or num_distractors + num_negatives == 0:
        raise ValueError(
            "need num_distractors >= 0, num_negatives >= 0 and at least one of them > 0, got "
            f"{num_distractors}, {num_negatives}"
        )
    if not ts.queries:
        raise TrainingDataError("the training set has no queries")
    doc_ids = list(ts.documents)
    width = 1 + num_distractors + num_negatives
    columns: dict[str, list[Any]] = {"query": []}
    columns.update({f"cand_{c}": [] for c in range(width)})
    columns["label"] = []
    for i, q in enumerate(ts.queries):
        rng = random.Random(_stable_seed(seed, "lore", i))
        positive = rng.choice(q.gold)
        distractors = list(q.distractors)
        chosen = rng.sample(distractors, min(num_distractors, len(distractors)))
        excluded = set(q.gold) | set(q.distractors)
        negatives: list[str] = []
        tries = 0
        while len(negatives) < num_negatives and tries < 50 * max(num_negatives, 1):
            tries += 1
            doc = doc_ids[rng.randrange(len(doc_ids))]
            if doc not in excluded and doc not in negatives:
                negatives.append(doc)
        texts = [ts.documents[positive]]
        tiers = [1]
        texts += [ts.documents[d] for d in chosen] + [""] * (num_distractors - len(chosen))
        tiers += [0] * len(chosen) + [-100] * (num_distractors - len(chosen))
        texts += [ts.documents[d] for d in negatives] + [""] * (num_negatives - len(negatives))
        tiers += [-1] * len(negatives) + [-100] * (num_negatives - len(negatives))
        columns["query"].append(q.text)
        for c, text in enumerate(texts):
            columns[f"cand_{c}"].append(text)
        columns["label"].append(tiers)
    return datasets.Dataset.from_dict(columns)
