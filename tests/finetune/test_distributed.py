"""Distributed training: 2 CPU processes (gloo) give the single-process loss and gradient.

The loss-level test spawns two ranks that each hold part of a fixed batch of embeddings and
compute SupCon, LogiCoL and LORE with ``gather_across_devices=True``. The mean of the
per-rank losses must equal the single-process loss on the whole batch, and each rank's
gradient on its own embeddings, divided by the world size (what DDP's gradient averaging
does to the parameter gradients), must equal the single-process gradient of those rows.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import _ddp_worker as worker  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module", params=[(4, 4), (5, 3)], ids=["even", "uneven"])
def two_ranks(request, tmp_path_factory, monkeypatch_module):
    import torch.distributed as dist
    import torch.multiprocessing as mp

    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    split = list(request.param)
    tmp = tmp_path_factory.mktemp("ddp")
    monkeypatch_module.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch_module.setenv("MASTER_PORT", str(_free_port()))
    mp.spawn(worker.rank_main, args=(2, str(tmp / "init"), split, str(tmp)), nprocs=2, join=True)
    return split, [torch.load(tmp / f"rank{r}.pt") for r in range(2)]


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("kind", ["supcon", "logicol", "lore"])
def test_mean_of_rank_losses_is_the_single_process_loss(two_ranks, kind):
    _, results = two_ranks
    single, _ = worker.loss_and_grad(kind, False, slice(None))
    ranks = [r[kind][0] for r in results]
    assert sum(ranks) / len(ranks) == pytest.approx(single, abs=1e-5)


@pytest.mark.parametrize("kind", ["supcon", "logicol", "lore"])
def test_rank_gradients_over_world_size_are_the_single_process_gradient(two_ranks, kind):
    split, results = two_ranks
    world = len(split)
    d = worker.data()
    queries = d["queries"].clone().requires_grad_(True)
    loss_fn = worker.build(kind, False)
    if kind == "lore":
        loss = loss_fn.compute_loss_from_embeddings(queries, d["lore_docs"], d["tiers"])
    else:
        docs = d["docs"].clone().requires_grad_(True)
        loss = loss_fn.compute_loss_from_embeddings(queries, torch.cat(list(docs)), d["labels"])
    loss.backward()
    start = 0
    for rank, n in enumerate(split):
        rows = slice(start, start + n)
        expected = [queries.grad[rows].reshape(-1)]
        if kind != "lore":
            expected.append(docs.grad[:, rows].reshape(-1))
        got = results[rank][kind][1] / world
        torch.testing.assert_close(got, torch.cat(expected), rtol=1e-6, atol=1e-8)
        start += n


def test_logicol_regularisers_are_active_in_the_fixed_batch():
    """Guard: the LogiCoL check above is only meaningful if the pair terms are non-zero."""
    d = worker.data()
    loss_fn = worker.build("logicol", False)
    parts = loss_fn.components(d["queries"], torch.cat(list(d["docs"])), d["labels"])
    assert float(parts["subset"]) > 0 and float(parts["exclusion"]) > 0


def test_without_process_group_gathering_is_a_no_op():
    single, grad = worker.loss_and_grad("logicol", False, slice(None))
    gathered, grad_g = worker.loss_and_grad("logicol", True, slice(None))
    assert gathered == pytest.approx(single)
    torch.testing.assert_close(grad_g, grad)
