"""LogiCoL against loops written from the formulas (Shen et al. 2025 and the authors' code)."""

from __future__ import annotations

import pytest
import torch

from logic_rag.finetune.losses import (
    BatchRelations,
    LogiCoLLoss,
    MultiPositiveSupConLoss,
    logicol_components,
)


def cos(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.dot(a, b) / (torch.sqrt(torch.dot(a, a)) * torch.sqrt(torch.dot(b, b)))


def slow_supcon(q, d, positive, tau):
    total = torch.zeros((), dtype=q.dtype)
    for i in range(q.shape[0]):
        denom = sum(torch.exp(cos(q[i], d[k]) / tau) for k in range(d.shape[0]))
        pos = [p for p in range(d.shape[0]) if positive[i, p]]
        total = total - sum(torch.log(torch.exp(cos(q[i], d[p]) / tau) / denom) for p in pos) / len(
            pos
        )
    return total / q.shape[0]


def slow_subset(q, d, subset, margin):
    """mean over pairs q1 ⊂ q2 of mean over d of max(0, log s~(q1,d) - log s~(q2,d) + margin)."""
    pairs = [
        (i, j) for i in range(q.shape[0]) for j in range(q.shape[0]) if i != j and subset[i, j]
    ]
    if not pairs:
        return torch.zeros((), dtype=q.dtype)
    total = torch.zeros((), dtype=q.dtype)
    for i, j in pairs:
        for k in range(d.shape[0]):
            s1 = (cos(q[i], d[k]) + 1) / 2
            s2 = (cos(q[j], d[k]) + 1) / 2
            total = total + torch.clamp(torch.log(s1) - torch.log(s2) + margin, min=0) / d.shape[0]
    return total / len(pairs)


def slow_exclusion(q, d, exclusion, margin, tau_e):
    """mean over exclusive pairs of max(0, margin - (KL(p1||p2) + KL(p2||p1)) / 2)."""
    n = q.shape[0]
    pairs = [
        (i, j)
        for i in range(n)
        for j in range(n)
        if i != j and (exclusion[i, j] or exclusion[j, i])
    ]
    if not pairs:
        return torch.zeros((), dtype=q.dtype)

    def dist(i):
        e = [torch.exp(cos(q[i], d[k]) / tau_e) for k in range(d.shape[0])]
        z = sum(e)
        return [x / z for x in e]

    total = torch.zeros((), dtype=q.dtype)
    for i, j in pairs:
        p1, p2 = dist(i), dist(j)
        kl12 = sum(a * torch.log(a / b) for a, b in zip(p1, p2, strict=True))
        kl21 = sum(b * torch.log(b / a) for a, b in zip(p1, p2, strict=True))
        total = total + torch.clamp(margin - 0.5 * (kl12 + kl21), min=0)
    return total / len(pairs)


def random_batch(seed: int, b: int = 6, dim: int = 5):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, dim, generator=g, dtype=torch.float64)
    d = torch.randn(b, dim, generator=g, dtype=torch.float64)
    positive = (torch.rand(b, b, generator=g) < 0.3) | torch.eye(b, dtype=torch.bool)
    subset = torch.rand(b, b, generator=g) < 0.3
    exclusion = torch.rand(b, b, generator=g) < 0.3
    return q, d, BatchRelations(positive=positive, subset=subset, exclusion=exclusion)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("tau_e", [1.0, 0.1])
def test_value_and_gradients_match_the_formula(passthrough, seed: int, tau_e: float) -> None:
    q, d, rel = random_batch(seed)
    loss = LogiCoLLoss(passthrough, exclusion_temperature=tau_e)
    qx, dx = q.clone().requires_grad_(), d.clone().requires_grad_()
    value = loss([{"emb": qx}, {"emb": dx}], rel)
    value.backward()

    qr, dr = q.clone().requires_grad_(), d.clone().requires_grad_()
    ref = (
        slow_supcon(qr, dr, rel.positive, 0.05)
        + 0.1 * slow_exclusion(qr, dr, rel.exclusion, 0.2, tau_e)
        + 0.1 * slow_subset(qr, dr, rel.subset, 0.2)
    )
    ref.backward()
    assert torch.allclose(value, ref.detach(), rtol=1e-9, atol=1e-12)
    assert torch.allclose(qx.grad, qr.grad, rtol=1e-7, atol=1e-10)
    assert torch.allclose(dx.grad, dr.grad, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_each_regulariser_matches_its_formula(seed: int) -> None:
    q, d, rel = random_batch(seed)
    parts = logicol_components(q, d, rel, exclusion_temperature=0.2, subset_margin=0.5)
    assert torch.allclose(parts["subset"], slow_subset(q, d, rel.subset, 0.5), rtol=1e-10)
    assert torch.allclose(
        parts["exclusion"], slow_exclusion(q, d, rel.exclusion, 0.2, 0.2), rtol=1e-10
    )
    assert torch.allclose(parts["supcon"], slow_supcon(q, d, rel.positive, 0.05), rtol=1e-10)


def _unit(angle_deg: float) -> torch.Tensor:
    a = torch.deg2rad(torch.tensor(angle_deg, dtype=torch.float64))
    return torch.stack([torch.cos(a), torch.sin(a)])


def test_subset_hinge_is_zero_when_satisfied_and_positive_when_violated() -> None:
    # Docs close to q_wide; q_narrow at ~90 degrees: s~(narrow,d) ~ 0.5 <= e^-0.2 * s~(wide,d).
    q = torch.stack([_unit(90), _unit(0)])  # 0: narrow, 1: wide
    d = torch.stack([_unit(-5), _unit(5)])
    narrow_in_wide = torch.tensor([[False, True], [False, False]])
    ok = logicol_components(q, d, BatchRelations(torch.eye(2).bool(), subset=narrow_in_wide))
    assert ok["subset"].item() == 0.0
    wide_in_narrow = narrow_in_wide.T.clone()
    bad = logicol_components(q, d, BatchRelations(torch.eye(2).bool(), subset=wide_in_narrow))
    assert bad["subset"].item() > 0.2


def test_exclusion_hinge_is_zero_when_satisfied_and_equals_margin_for_identical_queries() -> None:
    d = torch.stack([_unit(0), _unit(90), _unit(180)])
    excl = torch.tensor([[False, True, False], [True, False, False], [False] * 3])
    apart = torch.stack([_unit(0), _unit(90), _unit(200)])
    parts = logicol_components(
        apart, d, BatchRelations(torch.eye(3).bool(), exclusion=excl), exclusion_temperature=0.05
    )
    assert parts["exclusion"].item() == 0.0
    same = torch.stack([_unit(0), _unit(0), _unit(200)])
    parts = logicol_components(
        same, d, BatchRelations(torch.eye(3).bool(), exclusion=excl), exclusion_margin=0.3
    )
    assert parts["exclusion"].item() == pytest.approx(0.3, abs=1e-12)


def test_total_is_weighted_sum_and_zero_weights_give_supcon(passthrough) -> None:
    q, d, rel = random_batch(3)
    feats = [{"emb": q}, {"emb": d}]
    parts = LogiCoLLoss(passthrough, exclusion_weight=0.3, subset_weight=0.7).components(q, d, rel)
    assert torch.allclose(
        parts["total"], parts["supcon"] + 0.3 * parts["exclusion"] + 0.7 * parts["subset"]
    )
    assert parts["exclusion"] > 0 and parts["subset"] > 0
    plain = MultiPositiveSupConLoss(passthrough)(feats, rel)
    assert torch.allclose(
        LogiCoLLoss(passthrough, exclusion_weight=0, subset_weight=0)(feats, rel), plain
    )


def test_no_related_pairs_leaves_plain_supcon(passthrough) -> None:
    q, d, rel = random_batch(4)
    only_pos = BatchRelations(positive=rel.positive)
    feats = [{"emb": q}, {"emb": d}]
    assert torch.equal(
        LogiCoLLoss(passthrough)(feats, only_pos),
        MultiPositiveSupConLoss(passthrough)(feats, only_pos),
    )


def test_config_and_citation(passthrough) -> None:
    loss = LogiCoLLoss(passthrough)
    assert loss.get_config_dict() == {
        "temperature": 0.05,
        "relations": "None",
        "gather_across_devices": False,
        "frozen_documents": False,
        "exclusion_weight": 0.1,
        "subset_weight": 0.1,
        "exclusion_margin": 0.2,
        "subset_margin": 0.2,
        "exclusion_temperature": 1.0,
    }
    assert "Logically-Informed Contrastive Learning" in loss.citation and "2025" in loss.citation
    with pytest.raises(ValueError):
        LogiCoLLoss(passthrough, exclusion_temperature=0)
