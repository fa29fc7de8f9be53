"""LORE tiered loss against a loop written from the formula; the document side stays frozen."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from logic_rag.finetune.losses import LoreLoss, lore_loss
from logic_rag.finetune.losses.lore import DISTRACTOR, IGNORE, NEGATIVE, POSITIVE


def slow_lore(q, d, tiers, tau, beta, alpha):
    """mean_q mean_{p in P(q)} -log(e^{l_p} / (e^{l_p} + beta sum_N1 e^l + alpha sum_N2 e^l))."""
    total = torch.zeros((), dtype=q.dtype)
    for i in range(q.shape[0]):
        logit = [
            torch.dot(q[i], d[i, c]) / (q[i].norm() * d[i, c].norm()) / tau
            for c in range(d.shape[1])
        ]
        n1 = sum((torch.exp(logit[c]) for c in range(d.shape[1]) if tiers[i, c] == DISTRACTOR), 0.0)
        n2 = sum((torch.exp(logit[c]) for c in range(d.shape[1]) if tiers[i, c] == NEGATIVE), 0.0)
        pos = [c for c in range(d.shape[1]) if tiers[i, c] == POSITIVE]
        if not pos:
            continue
        terms = [
            -torch.log(torch.exp(logit[p]) / (torch.exp(logit[p]) + beta * n1 + alpha * n2))
            for p in pos
        ]
        total = total + sum(terms) / len(pos)
    return total / q.shape[0]


def random_case(seed: int, b: int = 5, c: int = 6, dim: int = 4):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, dim, generator=g, dtype=torch.float64)
    d = torch.randn(b, c, dim, generator=g, dtype=torch.float64)
    tiers = torch.tensor([POSITIVE, DISTRACTOR, NEGATIVE, IGNORE])[
        torch.randint(0, 4, (b, c), generator=g)
    ]
    tiers[0] = torch.tensor([POSITIVE, POSITIVE, DISTRACTOR, NEGATIVE, NEGATIVE, IGNORE])[:c]
    tiers[1, :] = NEGATIVE  # a query without positives contributes 0
    return q, d, tiers


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(("beta", "alpha"), [(3.0, 1.0), (1.0, 1.0), (0.5, 2.0)])
def test_value_and_gradient_match_the_formula(seed: int, beta: float, alpha: float) -> None:
    q, d, tiers = random_case(seed)
    qx = q.clone().requires_grad_()
    cos = torch.einsum(
        "bh,bch->bc", nn.functional.normalize(qx, dim=-1), nn.functional.normalize(d, dim=-1)
    )
    value = lore_loss(cos, tiers, 0.05, beta, alpha)
    value.backward()
    qr = q.clone().requires_grad_()
    ref = slow_lore(qr, d, tiers, 0.05, beta, alpha)
    ref.backward()
    assert torch.allclose(value, ref.detach(), rtol=1e-9)
    assert torch.allclose(qx.grad, qr.grad, rtol=1e-7, atol=1e-12)


def test_distractors_weigh_more_than_negatives() -> None:
    cos = torch.tensor([[0.5, 0.3]], dtype=torch.float64)
    as_distractor = lore_loss(cos, torch.tensor([[POSITIVE, DISTRACTOR]]), 0.05, 3.0, 1.0)
    as_negative = lore_loss(cos, torch.tensor([[POSITIVE, NEGATIVE]]), 0.05, 3.0, 1.0)
    assert as_distractor > as_negative
    # + log(beta) on the logit: the same as multiplying exp by beta.
    expected = math.log1p(3.0 * math.exp((0.3 - 0.5) / 0.05))
    assert as_distractor.item() == pytest.approx(expected, rel=1e-12)


def test_other_positives_are_not_in_the_denominator() -> None:
    cos = torch.tensor([[0.9, 0.1, 0.2]], dtype=torch.float64)
    two_pos = lore_loss(cos, torch.tensor([[POSITIVE, POSITIVE, NEGATIVE]]), 0.05, 3.0, 1.0)
    exp = [math.exp(c / 0.05) for c in (0.9, 0.1, 0.2)]
    ref = (-math.log(exp[0] / (exp[0] + exp[2])) - math.log(exp[1] / (exp[1] + exp[2]))) / 2
    assert two_pos.item() == pytest.approx(ref, rel=1e-12)


def test_only_the_query_encoder_gets_gradients(table_model) -> None:
    g = torch.Generator().manual_seed(0)
    model = table_model(torch.randn(10, 4, generator=g))
    loss = LoreLoss(model, column_tiers=(POSITIVE, DISTRACTOR, NEGATIVE))
    loss.train()
    assert not loss.document_model.training
    feats = [
        {"ids": torch.tensor([0, 1])},
        {"ids": torch.tensor([2, 3])},
        {"ids": torch.tensor([4, 5])},
        {"ids": torch.tensor([6, 7])},
    ]
    before = loss.document_model.table.detach().clone()
    value = loss(feats, None)
    value.backward()
    assert model.table.grad is not None
    assert model.table.grad[2:].abs().sum() == 0  # document rows get nothing through the query side
    assert loss.document_model.table.grad is None
    with torch.no_grad():
        model.table -= 0.5 * model.table.grad
    assert torch.equal(loss.document_model.table, before)  # the index-side encoder is unchanged
    # Labels given per row override column_tiers and are validated.
    with pytest.raises(ValueError, match="one tier per candidate"):
        loss(feats, torch.tensor([[1, 0], [1, 0]]))


def test_requires_tiers_and_reports_config(passthrough, table_model) -> None:
    loss = LoreLoss(table_model(torch.zeros(2, 2)))
    with pytest.raises(ValueError, match="tier labels"):
        loss([{"ids": torch.tensor([0])}, {"ids": torch.tensor([1])}], None)
    assert loss.get_config_dict() == {
        "temperature": 0.05,
        "beta": 3.0,
        "alpha": 1.0,
        "column_tiers": None,
        "gather_across_devices": False,
        "document_model": "frozen copy of the initial model",
    }
    assert "Logic-Oriented Retriever Enhancement" in loss.citation
    with pytest.raises(ValueError, match="unknown tier"):
        LoreLoss(table_model(torch.zeros(2, 2)), column_tiers=(1, 2))
