"""GradCache losses give the same value and the same parameter gradients as the plain ones."""

from __future__ import annotations

import pytest
import torch

from logic_rag.finetune.losses import (
    BatchRelations,
    CachedLogiCoLLoss,
    CachedMultiPositiveSupConLoss,
    LogiCoLLoss,
    MultiPositiveSupConLoss,
)

QUERIES = [
    "orchids of Malaysia",
    "orchids of Malaysia but not Thailand",
    "orchids of Malaysia and Thailand",
    "1990s Italian crime films",
    "moths of Guadeloupe",
    "moths or insects of Guadeloupe",
]
DOCS = [
    "Dendrobium is a genus of orchids found in Malaysia.",
    "Bulbophyllum is an orchid endemic to Borneo.",
    "Vanda is an orchid native to Thailand and Malaysia.",
    "La scorta is a 1993 Italian crime film.",
    "Utetheisa is a moth recorded in Guadeloupe.",
    "A beetle described from the Lesser Antilles.",
]
NEGATIVES = ["A tennis player from Spain.", "A river in Canada.", "A 1950s jazz album."] * 2


def relations() -> BatchRelations:
    positive = torch.eye(6, dtype=torch.bool)
    positive[0, 1] = positive[0, 2] = positive[2, 0] = positive[5, 4] = True
    subset = torch.zeros(6, 6, dtype=torch.bool)
    subset[1, 0] = subset[2, 0] = subset[4, 5] = True
    exclusion = torch.zeros(6, 6, dtype=torch.bool)
    exclusion[1, 2] = True
    return BatchRelations(positive=positive, subset=subset, exclusion=exclusion)


def loss_and_grads(model, loss, features, labels):
    model.zero_grad()
    value = loss([dict(f) for f in features], labels)
    value.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    return value.detach(), grads


@pytest.mark.parametrize(
    ("plain_cls", "cached_cls", "kwargs"),
    [
        (MultiPositiveSupConLoss, CachedMultiPositiveSupConLoss, {}),
        (LogiCoLLoss, CachedLogiCoLLoss, {"exclusion_temperature": 0.05, "subset_weight": 0.5}),
    ],
)
def test_cached_equals_plain(minilm, plain_cls, cached_cls, kwargs) -> None:
    minilm.eval()  # no dropout: both passes see the same network
    features = [minilm.preprocess(QUERIES), minilm.preprocess(DOCS), minilm.preprocess(NEGATIVES)]
    plain = plain_cls(minilm, **kwargs)
    cached = cached_cls(minilm, mini_batch_size=4, **kwargs)  # 6 rows -> mini-batches of 4 and 2
    v_plain, g_plain = loss_and_grads(minilm, plain, features, relations())
    v_cached, g_cached = loss_and_grads(minilm, cached, features, relations())
    minilm.zero_grad()
    assert torch.allclose(v_plain, v_cached, rtol=1e-5, atol=1e-6)
    assert g_plain.keys() == g_cached.keys() and len(g_plain) > 10
    for name, grad in g_plain.items():
        assert torch.allclose(grad, g_cached[name], rtol=1e-3, atol=1e-6), name
    assert cached.get_config_dict()["mini_batch_size"] == 4
    assert {
        k: v for k, v in cached.get_config_dict().items() if not k.startswith("mini_batch")
    } == (plain.get_config_dict())
    assert "Scaling Deep Contrastive Learning" in cached.citation
    assert getattr(cached, "uses_gradient_cache", False)


def test_cached_without_grad_returns_the_plain_value(minilm) -> None:
    minilm.eval()
    features = [minilm.preprocess(QUERIES), minilm.preprocess(DOCS)]
    with torch.no_grad():
        plain = LogiCoLLoss(minilm)([dict(f) for f in features], relations())
        cached = CachedLogiCoLLoss(minilm, mini_batch_size=2)(
            [dict(f) for f in features], relations()
        )
    assert torch.allclose(plain, cached, rtol=1e-5)
