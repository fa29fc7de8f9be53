"""Batches that mix logical groups with random queries (LogiCoL's sampling strategy).

LogiCoL's regularisers act only between queries that meet in a batch, so batches must hold
queries that share atoms (``A``, ``B``, ``A ∧ B``, ``A ∖ B``, ``A ∨ B`` ...: one logical group).
Batches made only of groups give few random in-batch negatives, so a share ``alpha`` of each
batch is random queries; the paper found ``alpha`` around 0.5-0.7 best.

How it works, per epoch (seeded by ``seed + epoch``, so every epoch is reproducible and
differs from the others):

1. Ungrouped examples go to the random pool; then whole groups, in shuffled order, are
   dissolved into the random pool until it holds ``round(alpha * N)`` examples (as the authors
   dissolve a share ``alpha`` of the groups).
2. The remaining groups are shuffled, their members shuffled, and concatenated into the group
   stream; the random pool is shuffled.
3. Each batch takes ``batch_size - round(alpha * batch_size)`` examples from the group stream
   and ``round(alpha * batch_size)`` from the random pool; when one runs dry the other fills
   the batch. Every example appears exactly once per epoch (the last, short batch is dropped
   with ``drop_last``), so a batch never holds the same example twice.

Group ids come from ``group_ids`` (one per dataset row; None or a negative int = no group), or
else from the dataset's label column (the first of ``valid_label_columns`` present), at
position ``label_group_index`` of each row's label list (``[query_id, positive_doc_id,
group_id]``, see :mod:`logic_rag.finetune.losses.relations`). A plain ``group_id`` dataset
column would be tokenised as text by the trainer, hence the label column.

With ``SentenceTransformerTrainingArguments(batch_sampler=LogicalGroupBatchSampler)`` the
trainer builds it with the defaults; for other settings pass
``functools.partial(LogicalGroupBatchSampler, alpha=0.5)`` (the trainer accepts a callable).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from sentence_transformers.base.sampler import DefaultBatchSampler

__all__ = ["LogicalGroupBatchSampler"]


class LogicalGroupBatchSampler(DefaultBatchSampler):
    """Batch sampler mixing logical groups of queries with a share ``alpha`` of random queries.

    Args:
        dataset: the training dataset (a ``datasets.Dataset`` or any sized sequence of rows).
        batch_size, drop_last, valid_label_columns, generator, seed: as passed by the
            sentence-transformers trainer (``generator`` is unused: each epoch draws from its
            own ``random.Random(seed + epoch)`` so results do not depend on other consumers).
        alpha: share of random queries in each batch, in [0, 1].
        group_ids: one group id per row; overrides the label column.
        label_group_index: position of the group id in each row's label list.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        drop_last: bool,
        valid_label_columns: list[str] | None = None,
        generator: Any = None,
        seed: int = 0,
        *,
        alpha: float = 0.6,
        group_ids: Sequence[Hashable | None] | None = None,
        label_group_index: int = 2,
    ) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(
                f"alpha is the share of random queries per batch, in [0, 1]; got {alpha}"
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        super().__init__(
            dataset,
            batch_size=batch_size,
            drop_last=drop_last,
            valid_label_columns=valid_label_columns,
            generator=generator,
            seed=seed,
        )
        self.dataset = dataset
        self.alpha = float(alpha)
        self.label_group_index = label_group_index
        self.num_examples = len(dataset)
        ids = list(group_ids) if group_ids is not None else self._groups_from_labels(dataset)
        if len(ids) != self.num_examples:
            raise ValueError(
                f"group_ids has {len(ids)} entries but the dataset has {self.num_examples} rows"
            )
        groups: dict[Hashable, list[int]] = {}
        ungrouped: list[int] = []
        for index, gid in enumerate(ids):
            if gid is None or (isinstance(gid, int) and gid < 0):
                ungrouped.append(index)
            else:
                groups.setdefault(gid, []).append(index)
        self.groups = groups
        self.ungrouped = ungrouped
        self.num_random = round(self.alpha * self.batch_size)
        self.num_grouped = self.batch_size - self.num_random

    def _groups_from_labels(self, dataset: Any) -> list[Any]:
        columns = getattr(dataset, "column_names", None) or []
        for column in self.valid_label_columns or []:
            if column in columns:
                labels = dataset[column]
                try:
                    return [row[self.label_group_index] for row in labels]
                except (TypeError, IndexError) as error:
                    raise ValueError(
                        f"label column {column!r} must hold lists with the group id at position "
                        f"{self.label_group_index} ([query_id, positive_doc_id, group_id]); pass "
                        "group_ids=... to the sampler otherwise"
                    ) from error
        raise ValueError(
            "LogicalGroupBatchSampler needs group ids: pass group_ids=... (e.g. with "
            "functools.partial) or give the dataset a 'label' column of [query_id, "
            f"positive_doc_id, group_id] lists; dataset columns: {list(columns)}"
        )

    def epoch_plan(self, epoch: int | None = None) -> list[tuple[list[int], list[int]]]:
        """The batches of an epoch as ``(grouped_indices, random_indices)`` pairs."""
        rng = random.Random(self.seed + (self.epoch if epoch is None else epoch))
        target_random = round(self.alpha * self.num_examples)
        random_pool = list(self.ungrouped)
        group_keys = list(self.groups)
        rng.shuffle(group_keys)
        kept: list[Hashable] = []
        for key in group_keys:
            if len(random_pool) < target_random:
                random_pool.extend(self.groups[key])
            else:
                kept.append(key)
        stream: list[int] = []
        for key in kept:
            members = list(self.groups[key])
            rng.shuffle(members)
            stream.extend(members)
        rng.shuffle(random_pool)

        plan: list[tuple[list[int], list[int]]] = []
        g = r = 0
        while g < len(stream) or r < len(random_pool):
            take_g = min(self.num_grouped, len(stream) - g)
            take_r = min(self.num_random, len(random_pool) - r)
            # One stream ran dry: let the other fill the batch.
            spare = self.batch_size - take_g - take_r
            extra_g = min(spare, len(stream) - g - take_g)
            take_g += extra_g
            take_r += min(spare - extra_g, len(random_pool) - r - take_r)
            plan.append((stream[g : g + take_g], random_pool[r : r + take_r]))
            g += take_g
            r += take_r
        if self.drop_last and plan and len(plan[-1][0]) + len(plan[-1][1]) < self.batch_size:
            plan.pop()
        return plan

    def __iter__(self) -> Iterator[list[int]]:
        for grouped, randoms in self.epoch_plan():
            yield grouped + randoms

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_examples // self.batch_size
        return math.ceil(self.num_examples / self.batch_size)
