"""Rank body of the 2-process gloo tests in test_distributed.py (a plain module, so that
``torch.multiprocessing.spawn`` can pickle it by name)."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

N = 8
DIM = 16
COLUMNS = 2  # positive + one hard negative
CANDIDATES = 5
SUBSET = [(0, 1), (2, 3), (4, 6), (1, 5)]
EXCLUSION = [(1, 5), (3, 7), (0, 6), (2, 4)]


class PassThrough:
    def __call__(self, features):
        return {"sentence_embedding": features["emb"]}


def relations():
    from logic_rag.finetune.losses import GoldSetRelations

    # Query i's own document is i; consecutive queries share each other's documents, so
    # positives cross the rank boundary (3 and 4) and hard negatives can be gold elsewhere.
    gold = {i: {i, i ^ 1, (i + 4) % N} for i in range(N)}
    return GoldSetRelations(gold, subset_pairs=SUBSET, exclusion_pairs=EXCLUSION)


def data() -> dict[str, torch.Tensor]:
    """The fixed global batch, identical in every process."""
    g = torch.Generator().manual_seed(0)
    labels = torch.tensor([[i, i, i // 4] for i in range(N)])
    tiers = torch.tensor([[1, 0, -1, -1, -1], [1, 1, 0, -1, -100]] * (N // 2))
    return {
        "queries": torch.randn(N, DIM, generator=g, dtype=torch.float64),
        "docs": torch.randn(COLUMNS, N, DIM, generator=g, dtype=torch.float64),
        "labels": labels,
        "lore_docs": torch.randn(N, CANDIDATES, DIM, generator=g, dtype=torch.float64),
        "tiers": tiers,
    }


def build(kind: str, gather: bool):
    from logic_rag.finetune import losses

    if kind == "supcon":
        return losses.MultiPositiveSupConLoss(
            PassThrough(), relations=relations(), gather_across_devices=gather
        )
    if kind == "logicol":
        # Large margins so that every subset / exclusion hinge is active.
        return losses.LogiCoLLoss(
            PassThrough(),
            relations=relations(),
            exclusion_weight=0.5,
            subset_weight=0.5,
            exclusion_margin=5.0,
            subset_margin=1.0,
            exclusion_temperature=0.1,
            gather_across_devices=gather,
        )
    return losses.LoreLoss(
        nn.Identity(), document_model=nn.Identity(), gather_across_devices=gather
    )


def loss_and_grad(kind: str, gather: bool, rows: slice) -> tuple[float, torch.Tensor]:
    """Loss of ``rows`` of the fixed batch and its gradient w.r.t. those query embeddings."""
    d = data()
    loss_fn = build(kind, gather)
    queries = d["queries"][rows].clone().requires_grad_(True)
    if kind == "lore":
        loss = loss_fn.compute_loss_from_embeddings(queries, d["lore_docs"][rows], d["tiers"][rows])
        leaves = [queries]
    else:
        docs = d["docs"][:, rows].clone().requires_grad_(True)
        loss = loss_fn.compute_loss_from_embeddings(
            queries, torch.cat(list(docs)), d["labels"][rows]
        )
        leaves = [queries, docs]
    loss.backward()
    grads = [leaf.grad.reshape(-1) for leaf in leaves]
    return float(loss.detach()), torch.cat(grads)


def rank_main(rank: int, world: int, init_file: str, split: list[int], out: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        start = sum(split[:rank])
        rows = slice(start, start + split[rank])
        results = {}
        for kind in ("supcon", "logicol", "lore"):
            results[kind] = loss_and_grad(kind, True, rows)
        torch.save(results, Path(out) / f"rank{rank}.pt")
        # Both ranks leave together: gloo aborts a process ("terminate called without an
        # active exception") whose peer tears its pair down first.
        dist.barrier()
    finally:
        dist.destroy_process_group()
