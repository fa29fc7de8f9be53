"""The contract between the training data and the in-batch losses.

In-batch losses for set retrieval need to know, for the batch they are handed, (a) which
in-batch document is gold for which query (several queries can share a gold document:
"orchids of Malaysia" and "orchids of Malaysia or Thailand"), and (b) which queries are
subsets of, or mutually exclusive with, which other queries. The sentence-transformers
trainer hands a loss only the tokenised text columns and one ``label`` column, and every
other dataset column would be tokenised as text. So the data side puts small integer ids in
the label column and a :class:`RelationProvider` turns the ids of a batch into boolean
matrices:

* label column layout, one list of ints per row: ``[query_id, positive_doc_id, group_id]``
  (see :data:`LABEL_QUERY_ID`, :data:`LABEL_DOC_ID`, :data:`LABEL_GROUP_ID`; the group id is
  read only by :class:`logic_rag.finetune.sampler.LogicalGroupBatchSampler` and may be
  omitted when that sampler gets ``group_ids`` directly);
* :class:`GoldSetRelations` maps the ids to :class:`BatchRelations` using gold sets and the
  subset / exclusion pairs the data side computed (e.g. with
  ``logic_rag.query.relation(q1, q2)``).

Tests and custom training loops may also pass a :class:`BatchRelations` directly as the
``labels`` argument of a loss.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logic_rag.errors import LogicRagError

if TYPE_CHECKING:
    import torch

__all__ = [
    "LABEL_QUERY_ID",
    "LABEL_DOC_ID",
    "LABEL_GROUP_ID",
    "LABEL_NEGATIVE_DOC_ID",
    "BatchRelations",
    "RelationProvider",
    "GoldSetRelations",
    "RelationError",
    "resolve_relations",
]

LABEL_QUERY_ID = 0
"""Position of the query id in a row of the label column."""
LABEL_DOC_ID = 1
"""Position of the id of the row's positive document in the label column."""
LABEL_GROUP_ID = 2
"""Position of the logical-group id (queries sharing atoms) in the label column."""
LABEL_NEGATIVE_DOC_ID = 3
"""Position of the id of the row's hard-negative document (when the batch has that column)."""


class RelationError(LogicRagError, ValueError):
    """The labels or relation matrices of a batch do not fit the batch."""


@dataclass(frozen=True)
class BatchRelations:
    """Boolean relation matrices for one batch of ``B`` queries and ``D`` candidate documents.

    Attributes:
        positive: ``[B, D]`` (or ``[B, B]`` when the batch has hard-negative columns, which are
            then taken as negatives for every query): ``positive[i, j]`` is True when document
            ``j`` is gold for query ``i``. Every query needs at least one positive.
        subset: ``[B, B]`` or None: ``subset[i, j]`` is True when the gold set of query ``i`` is
            contained in that of query ``j`` (``q_i ⊂ q_j``). The diagonal is ignored.
        exclusion: ``[B, B]`` or None: True when queries ``i`` and ``j`` are mutually exclusive
            (e.g. ``A ∖ B`` and ``A ∧ B``). Symmetrised; the diagonal is ignored.
    """

    positive: torch.Tensor
    subset: torch.Tensor | None = None
    exclusion: torch.Tensor | None = None

    def checked(self, num_queries: int, num_docs: int, device: Any) -> BatchRelations:
        """Validate the shapes against the batch and return normalised matrices on ``device``."""
        import torch

        positive = torch.as_tensor(self.positive, device=device).bool()
        if positive.ndim != 2 or positive.shape[0] != num_queries:
            raise RelationError(
                f"positive mask has shape {tuple(positive.shape)}, expected ({num_queries}, "
                f"{num_docs}): one row per query, one column per in-batch document"
            )
        if positive.shape[1] < num_docs:
            # Columns past the given ones are hard negatives: negative for every query.
            pad = positive.new_zeros(num_queries, num_docs - positive.shape[1])
            positive = torch.cat([positive, pad], dim=1)
        elif positive.shape[1] > num_docs:
            raise RelationError(
                f"positive mask has {positive.shape[1]} columns but the batch has only "
                f"{num_docs} documents"
            )
        missing = (~positive.any(dim=1)).nonzero().flatten().tolist()
        if missing:
            raise RelationError(
                f"queries at batch rows {missing} have no positive document in the batch; each "
                "row's own positive column must be marked (positive[i, i] for the pair layout)"
            )
        eye = torch.eye(num_queries, dtype=torch.bool, device=device)
        subset = self._square(self.subset, "subset", num_queries, device)
        exclusion = self._square(self.exclusion, "exclusion", num_queries, device)
        subset = subset & ~eye
        exclusion = (exclusion | exclusion.T) & ~eye
        return BatchRelations(positive=positive, subset=subset, exclusion=exclusion)

    @staticmethod
    def _square(mat: Any, name: str, n: int, device: Any) -> torch.Tensor:
        import torch

        if mat is None:
            return torch.zeros(n, n, dtype=torch.bool, device=device)
        mat = torch.as_tensor(mat, device=device).bool()
        if tuple(mat.shape) != (n, n):
            raise RelationError(
                f"{name} matrix has shape {tuple(mat.shape)}, expected ({n}, {n}): one row and "
                "one column per query of the batch"
            )
        return mat


RelationProvider = Callable[["torch.Tensor"], BatchRelations]
"""Turns the label tensor of a batch (``[B, k]`` ints) into :class:`BatchRelations`."""


class GoldSetRelations:
    """Relation provider backed by per-query gold sets and precomputed query-pair relations.

    Args:
        gold_sets: query id -> ids of its gold documents.
        subset_pairs: ``(q1, q2)`` query-id pairs with ``gold(q1) ⊂ gold(q2)`` (directed).
        exclusion_pairs: query-id pairs that are mutually exclusive (either order).

    Only pairs that can meet in a batch matter, so pairs inside each logical group are enough.
    """

    def __init__(
        self,
        gold_sets: Mapping[int, Iterable[int]],
        subset_pairs: Iterable[tuple[int, int]] = (),
        exclusion_pairs: Iterable[tuple[int, int]] = (),
    ) -> None:
        self.gold_sets: dict[int, frozenset[int]] = {
            int(q): frozenset(int(d) for d in docs) for q, docs in gold_sets.items()
        }
        self.subset_pairs = frozenset((int(a), int(b)) for a, b in subset_pairs)
        exclusion = {(int(a), int(b)) for a, b in exclusion_pairs}
        self.exclusion_pairs = frozenset(exclusion | {(b, a) for a, b in exclusion})

    def __repr__(self) -> str:
        return (
            f"GoldSetRelations(queries={len(self.gold_sets)}, subset_pairs="
            f"{len(self.subset_pairs)}, exclusion_pairs={len(self.exclusion_pairs) // 2})"
        )

    def __call__(self, labels: torch.Tensor) -> BatchRelations:
        import torch

        if labels is None or labels.ndim != 2 or labels.shape[1] < 2:
            shape = None if labels is None else tuple(labels.shape)
            raise RelationError(
                f"GoldSetRelations needs a label column of [query_id, positive_doc_id, ...] "
                f"lists, got labels of shape {shape}; add such a 'label' column to the dataset"
            )
        rows = labels.detach().cpu().tolist()
        qids = [int(r[LABEL_QUERY_ID]) for r in rows]
        dids = [int(r[LABEL_DOC_ID]) for r in rows]
        gold = []
        for i, (q, d) in enumerate(zip(qids, dids, strict=True)):
            if q not in self.gold_sets:
                raise RelationError(
                    f"batch row {i}: query id {q} has no gold set; build GoldSetRelations from "
                    "the same query table as the training dataset"
                )
            if d not in self.gold_sets[q]:
                raise RelationError(
                    f"batch row {i}: document {d} is not in the gold set of query {q}; the label "
                    "column must hold [query_id, positive_doc_id, group_id]"
                )
            gold.append(self.gold_sets[q])
        n = len(rows)
        positive = torch.tensor([[dids[j] in gold[i] for j in range(n)] for i in range(n)])
        if all(len(r) > LABEL_NEGATIVE_DOC_ID for r in rows):
            # A hard-negative column (the trainer concatenates it after the positives): its
            # document is a negative of its own row's query but may be gold for another.
            nids = [int(r[LABEL_NEGATIVE_DOC_ID]) for r in rows]
            for i, (q, nd) in enumerate(zip(qids, nids, strict=True)):
                if nd in self.gold_sets[q]:
                    raise RelationError(
                        f"batch row {i}: hard negative {nd} is in the gold set of query {q}"
                    )
            negative = torch.tensor([[nids[j] in gold[i] for j in range(n)] for i in range(n)])
            positive = torch.cat([positive, negative], dim=1)
        subset = torch.tensor(
            [[(qids[i], qids[j]) in self.subset_pairs for j in range(n)] for i in range(n)]
        )
        exclusion = torch.tensor(
            [[(qids[i], qids[j]) in self.exclusion_pairs for j in range(n)] for i in range(n)]
        )
        return BatchRelations(positive=positive, subset=subset, exclusion=exclusion)


def resolve_relations(
    labels: Any,
    provider: RelationProvider | None,
    num_queries: int,
    num_docs: int,
    device: Any,
) -> BatchRelations:
    """The relations of a batch: given directly, from the provider, or the one-positive default.

    With no provider and no :class:`BatchRelations`, row ``i``'s own document (column ``i``) is
    its only positive, which reduces the supervised contrastive loss to in-batch InfoNCE.
    """
    import torch

    if isinstance(labels, BatchRelations):
        relations = labels
    elif provider is not None:
        relations = provider(labels)
    else:
        relations = BatchRelations(positive=torch.eye(num_queries, dtype=torch.bool))
    return relations.checked(num_queries, num_docs, device)
