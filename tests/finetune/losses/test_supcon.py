"""Multi-positive SupCon against a loop written straight from Khosla et al. (2020), Eq. 2."""

from __future__ import annotations

import math

import pytest
import torch

from logic_rag.finetune.losses import BatchRelations, MultiPositiveSupConLoss


def cos(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.dot(a, b) / (torch.sqrt(torch.dot(a, a)) * torch.sqrt(torch.dot(b, b)))


def slow_supcon(
    q: torch.Tensor, d: torch.Tensor, positive: torch.Tensor, tau: float
) -> torch.Tensor:
    """L = mean_q -1/|P(q)| sum_{p in P(q)} log(exp(s(q,p)/tau) / sum_{d in D} exp(s(q,d)/tau))."""
    total = torch.zeros((), dtype=q.dtype)
    for i in range(q.shape[0]):
        denom = sum(torch.exp(cos(q[i], d[k]) / tau) for k in range(d.shape[0]))
        positives = [p for p in range(d.shape[0]) if positive[i, p]]
        term = sum(torch.log(torch.exp(cos(q[i], d[p]) / tau) / denom) for p in positives)
        total = total - term / len(positives)
    return total / q.shape[0]


def random_batch(seed: int, b: int = 6, extra_docs: int = 0, dim: int = 8):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, dim, generator=g, dtype=torch.float64)
    d = torch.randn(b + extra_docs, dim, generator=g, dtype=torch.float64)
    positive = torch.rand(b, b + extra_docs, generator=g) < 0.3
    positive[:, b:] = False  # hard negatives
    positive[torch.arange(b), torch.arange(b)] = True  # each row's own document
    return q, d, positive


def run_loss(loss, q, d, labels, doc_columns: int = 1):
    qx = q.clone().requires_grad_()
    dx = d.clone().requires_grad_()
    cols = [{"emb": c} for c in torch.chunk(dx, doc_columns)]
    value = loss([{"emb": qx}, *cols], labels)
    value.backward()
    return value.detach(), qx.grad, dx.grad


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("tau", [0.05, 0.5])
def test_value_and_gradients_match_the_formula(passthrough, seed: int, tau: float) -> None:
    q, d, positive = random_batch(seed, extra_docs=6)
    loss = MultiPositiveSupConLoss(passthrough, temperature=tau)
    value, gq, gd = run_loss(loss, q, d, BatchRelations(positive=positive), doc_columns=2)

    qr, dr = q.clone().requires_grad_(), d.clone().requires_grad_()
    ref = slow_supcon(qr, dr, positive, tau)
    ref.backward()
    assert torch.allclose(value, ref.detach(), rtol=1e-9, atol=1e-10)
    assert torch.allclose(gq, qr.grad, rtol=1e-7, atol=1e-10)
    assert torch.allclose(gd, dr.grad, rtol=1e-7, atol=1e-10)


def test_shared_gold_documents_change_the_loss(passthrough) -> None:
    """A document gold for two queries is a positive for both, not a negative for one."""
    q, d, positive = random_batch(5)
    only_own = BatchRelations(positive=torch.eye(6, dtype=torch.bool))
    loss = MultiPositiveSupConLoss(passthrough)
    a = loss([{"emb": q}, {"emb": d}], only_own)
    b = loss([{"emb": q}, {"emb": d}], BatchRelations(positive=positive))
    assert positive.sum() > 6 and not torch.isclose(a, b)


def test_one_positive_per_query_equals_multiple_negatives_ranking_loss(passthrough) -> None:
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    q, d, _ = random_batch(7, extra_docs=6)
    feats = [{"emb": q}, {"emb": d[:6]}, {"emb": d[6:]}]
    ours = MultiPositiveSupConLoss(passthrough, temperature=0.05)(feats, None)
    theirs = MultipleNegativesRankingLoss(passthrough, scale=20.0)(feats, None)
    assert torch.allclose(ours, theirs, rtol=1e-9)


def test_config_and_citation(passthrough) -> None:
    loss = MultiPositiveSupConLoss(passthrough, temperature=0.1)
    assert loss.get_config_dict() == {
        "temperature": 0.1,
        "relations": "None",
        "gather_across_devices": False,
        "frozen_documents": False,
    }
    assert "Supervised Contrastive Learning" in loss.citation and "khosla" in loss.citation
    with pytest.raises(ValueError, match="temperature"):
        MultiPositiveSupConLoss(passthrough, temperature=0.0)
    assert math.isfinite(
        float(MultiPositiveSupConLoss(passthrough)([{"emb": torch.ones(2, 3)}] * 2))
    )
