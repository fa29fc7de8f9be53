"""``frozen_documents``: SupCon / LogiCoL train the query side only (the --query-only recipe)."""

from __future__ import annotations

import pytest
import torch

from logic_rag.finetune.losses import LogiCoLLoss, MultiPositiveSupConLoss


def _features():
    return [{"ids": torch.tensor([0, 1, 2])}, {"ids": torch.tensor([3, 4, 5])}]


@pytest.mark.parametrize("cls", [MultiPositiveSupConLoss, LogiCoLLoss])
def test_documents_come_from_a_frozen_copy_and_get_no_gradient(cls, table_model) -> None:
    g = torch.Generator().manual_seed(0)
    table = torch.randn(6, 4, generator=g)
    model = table_model(table)
    loss = cls(model, frozen_documents=True)
    loss.train()
    assert not loss.document_model.training and loss.model.training
    # The frozen copy is not a registered sub-module: not saved, not optimised.
    assert all(not k.startswith("document_model") for k in loss.state_dict())
    assert all(p is model.table for p in loss.parameters())

    value = loss(_features(), None)
    value.backward()
    grad = model.table.grad
    assert grad[:3].abs().sum() > 0  # the query rows learn
    assert grad[3:].abs().sum() == 0  # document rows get nothing
    with torch.no_grad():
        model.table -= 0.5 * grad
    # The document side still embeds with the initial weights.
    assert torch.equal(loss.document_model.table, table)

    # Same value as the shared-tower loss over (queries from model, documents from the base).
    reference = cls(table_model(table))
    q = model.table[[0, 1, 2]].detach()
    d = table[[3, 4, 5]]
    frozen = cls(model, frozen_documents=True)
    assert frozen.compute_loss_from_embeddings(q, d, None).item() == pytest.approx(
        reference.compute_loss_from_embeddings(q, d, None).item(), rel=1e-6
    )
    assert loss.get_config_dict()["frozen_documents"] is True


def test_default_trains_both_towers(table_model) -> None:
    model = table_model(torch.randn(6, 4, generator=torch.Generator().manual_seed(1)))
    loss = MultiPositiveSupConLoss(model)
    assert loss.document_model is None
    loss(_features(), None).backward()
    assert model.table.grad[3:].abs().sum() > 0
