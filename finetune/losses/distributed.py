"""Gathering in-batch negatives across DDP ranks (``torchrun`` / ``accelerate launch``).

Under data-parallel training each rank embeds its own batch; an in-batch loss that only sees
that batch contrasts every query with ``B`` documents instead of the ``world_size * B`` of the
global batch. With ``gather_across_devices=True`` our losses all-gather the embeddings (with
gradients, through ``torch.distributed.nn.functional.all_gather``) and the integer labels, so
that every rank sees the global batch.

Normalisation: every rank computes the loss of the whole global batch, so each per-rank loss,
and therefore their mean (what the trainer logs), equals the single-process loss on the
concatenated batch. The backward of ``all_gather`` sums, into each rank's local embeddings,
the gradients that all ``W`` ranks' (identical) losses send them: ``W * dL/dx``. DDP then
averages parameter gradients over the ranks (divides by ``W``), which leaves exactly the
single-process gradient ``dL/dtheta``. This is the same gradient that sentence-transformers'
``MultipleNegativesRankingLoss(gather_across_devices=True)`` gets (local queries against
global documents); computing the whole batch on every rank costs a ``N x N`` score matrix
instead of ``B x N``, which is small next to the encoder, and keeps the pair terms of LogiCoL
(whose two queries may sit on different ranks) exact without bookkeeping.

Ranks may hold batches of different sizes (a short last batch): tensors are padded to the
largest local batch before the gather and the padding is cut off after it.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "distributed_world_size",
    "all_gather_with_grad",
    "all_gather_no_grad",
    "gather_in_batch",
    "global_count",
]


def distributed_world_size() -> int:
    """Processes in the default group, or 1 when ``torch.distributed`` is not initialised."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1


def _local_sizes(tensor: Tensor) -> list[int]:
    import torch.distributed as dist

    size = torch.tensor([tensor.shape[0]], device=tensor.device, dtype=torch.long)
    sizes = [torch.zeros_like(size) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, size)
    return [int(s.item()) for s in sizes]


def _pad_rows(tensor: Tensor, rows: int) -> Tensor:
    if tensor.shape[0] == rows:
        return tensor
    pad = tensor.new_zeros((rows - tensor.shape[0], *tensor.shape[1:]))
    return torch.cat([tensor, pad])


def all_gather_with_grad(tensor: Tensor) -> Tensor:
    """Concatenate ``tensor`` from every rank along dim 0, keeping the autograd graph.

    The gradient that reaches a rank's ``tensor`` is the sum over ranks of the gradients of
    their losses with respect to that rank's slice. Without an initialised process group (or
    with one process) the tensor is returned as is.
    """
    if distributed_world_size() == 1:
        return tensor
    from torch.distributed.nn.functional import all_gather

    sizes = _local_sizes(tensor)
    with warnings.catch_warnings():
        # Deprecated in favour of functional collectives, which carry no autograd on gloo.
        warnings.simplefilter("ignore", FutureWarning)
        gathered = all_gather(_pad_rows(tensor, max(sizes)))
    return torch.cat([g[:n] for g, n in zip(gathered, sizes, strict=True)])


def all_gather_no_grad(tensor: Tensor) -> Tensor:
    """Concatenate ``tensor`` (labels, frozen embeddings) from every rank along dim 0."""
    if distributed_world_size() == 1:
        return tensor
    import torch.distributed as dist

    sizes = _local_sizes(tensor)
    padded = _pad_rows(tensor.detach(), max(sizes)).contiguous()
    gathered = [torch.empty_like(padded) for _ in sizes]
    dist.all_gather(gathered, padded)
    return torch.cat([g[:n] for g, n in zip(gathered, sizes, strict=True)])


def global_count(n: int, device: Any = None) -> int:
    """Sum of ``n`` over the ranks (``n`` itself without a process group)."""
    if distributed_world_size() == 1:
        return int(n)
    import torch.distributed as dist

    total = torch.tensor([n], device=device, dtype=torch.long)
    dist.all_reduce(total)
    return int(total.item())


def gather_in_batch(queries: Tensor, docs: Tensor, labels: Any) -> tuple[Tensor, Tensor, Any]:
    """The global batch of an in-batch loss: queries, document columns and label rows.

    ``docs`` is the local ``(positive, negatives...)`` columns concatenated column after
    column (``k * B`` rows for ``B`` queries); each column is gathered separately so that the
    result has the layout of a single process on the concatenated batch (all positives, then
    all first negatives, ...). ``labels`` must be a tensor (the trainer's label column) or
    None; a :class:`~logic_rag.finetune.losses.relations.BatchRelations` of the local batch
    cannot be gathered and is refused.
    """
    from logic_rag.finetune.losses.relations import BatchRelations, RelationError

    if isinstance(labels, BatchRelations):
        raise RelationError(
            "gather_across_devices cannot gather a BatchRelations of the local batch; pass the "
            "label column ([query_id, positive_doc_id, group_id] rows) and a relation provider"
        )
    batch = queries.shape[0]
    if batch == 0 or docs.shape[0] % batch:
        raise ValueError(
            f"{docs.shape[0]} document rows for {batch} queries: expected whole columns of "
            "one document per query"
        )
    columns = docs.split(batch)
    global_queries = all_gather_with_grad(queries)
    global_docs = torch.cat([all_gather_with_grad(c) for c in columns])
    if labels is not None:
        labels = all_gather_no_grad(torch.as_tensor(labels, device=queries.device))
    return global_queries, global_docs, labels
