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
    try:
        mp.spawn(
            worker.rank_main, args=(2, str(tmp / "init"), split, str(tmp)), nprocs=2, join=True
        )
    except mp.ProcessExitedException:
        # An abort while gloo tears the pair down, after both ranks saved what they
        # computed, is not what these tests are about; anything earlier fails them.
        if not all((tmp / f"rank{r}.pt").is_file() for r in range(2)):
            raise
    return split, [torch.load(tmp / f"rank{r}.pt", weights_only=True) for r in range(2)]


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


def test_recipes_pass_the_flag_to_their_losses():
    from torch import nn

    from logic_rag.finetune.recipes import ContrastiveArgs, LoreArgs
    from logic_rag.finetune.recipes.cli import build_parser
    from logic_rag.finetune.recipes.contrastive import build_contrastive_loss

    for recipe in ("logicol", "supcon", "lore"):
        parser = build_parser(recipe)
        assert parser.parse_args(
            ["--train", "t", "--docs", "d", "--out", "o"]
        ).gather_across_devices
        off = parser.parse_args(["--train", "t", "--docs", "d", "--out", "o", "--no-gather-across-devices"])  # fmt: skip
        assert off.gather_across_devices is False
    model = nn.Sequential(nn.Identity())  # stands in for a SentenceTransformer (model[0])
    for loss in ("logicol", "supcon"):
        for cached in (False, True):
            args = ContrastiveArgs(train="t", docs="d", out="o", loss=loss, cached=cached)
            assert build_contrastive_loss(args, model, None).gather_across_devices
            args.gather_across_devices = False
            assert not build_contrastive_loss(args, model, None).gather_across_devices
    assert LoreArgs(train="t", docs="d", out="o").gather_across_devices


def test_launched_world_size_reads_torchrun_environment(monkeypatch):
    from logic_rag.finetune.recipes.training import launched_world_size

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert launched_world_size() == 1
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert launched_world_size() == 2


def test_logicol_recipe_under_torchrun_with_two_cpu_processes(tmp_path):
    """End to end: ``torchrun --nproc_per_node 2 -m logic_rag.cli finetune logicol`` on CPU
    (gloo) trains 2 steps on 16 queries (global batch 8) and writes one complete model."""
    import json
    import os
    import subprocess

    from logic_rag.evals.world import main as world_main
    from logic_rag.models import resolve_model

    try:
        resolve_model("minilm")
    except Exception as exc:  # pragma: no cover - depends on the installed model packages
        pytest.skip(f"minilm is not available offline: {exc}")
    world = tmp_path / "world"
    assert world_main(["--out", str(world), "--entities", "300", "--seed", "1"]) == 0
    out = tmp_path / "run"
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
        "-m", "logic_rag.cli", "finetune", "logicol",
        "--train", str(world / "train.jsonl"), "--docs", str(world / "documents.jsonl"),
        "--atoms", str(world / "atoms.jsonl"), "--out", str(out), "--max-steps", "2",
        "--batch-size", "4", "--max-seq-length", "32", "--limit", "16", "--save-steps", "2",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    env["TRANSFORMERS_OFFLINE"] = "1"
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("saved ") == 2  # both ranks return the same folder
    model = out / "model"
    assert (model / "model.safetensors").is_file()
    card = json.loads((model / "logic_rag_training.json").read_text(encoding="utf-8"))
    assert card["training"]["processes"] == 2
    assert card["training"]["global_step"] == 2
    assert card["loss"]["config"]["gather_across_devices"] is True
    assert not list(out.glob(".model.tmp-*"))
